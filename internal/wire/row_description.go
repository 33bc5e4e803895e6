package wire

import "fmt"

// FieldDescription describes one column of a RowDescription ('T').
//
//	cstring name, int32 table OID, int16 column attribute number,
//	int32 data type OID, int16 type size, int32 type modifier, int16 format
type FieldDescription struct {
	Name                 string
	TableOID             uint32 // 0 if the column is not a plain table column
	TableAttributeNumber uint16 // 0 if the column is not a plain table column
	DataTypeOID          uint32
	DataTypeSize         int16 // negative for variable-width types
	TypeModifier         int32
	Format               int16 // 0 text, 1 binary
}

// fieldDescriptionMinSize is the encoded size of a FieldDescription with an
// empty name.
const fieldDescriptionMinSize = 1 + 4 + 2 + 4 + 2 + 4 + 2

// ParseRowDescription decodes the body of a RowDescription, appending the
// fields to dst[:0] so a caller can reuse one slice. Each Name is a new
// string; nothing else is allocated once dst has room.
func ParseRowDescription(body []byte, dst []FieldDescription) ([]FieldDescription, error) {
	dst = dst[:0]
	if _, err := walkRowDescription(body, &dst); err != nil {
		return dst[:0], err
	}
	return dst, nil
}

// CheckRowDescription checks body as ParseRowDescription does and returns
// its column count, allocating nothing: for a reader that keeps no
// description but must check that each DataRow has its columns.
func CheckRowDescription(body []byte) (int, error) {
	return walkRowDescription(body, nil)
}

// walkRowDescription checks a RowDescription's body, appending its fields
// to *dst unless dst is nil, and returns its column count.
func walkRowDescription(body []byte, dst *[]FieldDescription) (int, error) {
	c := cursor{b: body, msg: "RowDescription"}
	n := c.count(fieldDescriptionMinSize)
	for i := 0; i < n && c.err == nil; i++ {
		name := c.cstring()
		f := FieldDescription{
			TableOID:             c.u32(),
			TableAttributeNumber: c.u16(),
			DataTypeOID:          c.u32(),
			DataTypeSize:         int16(c.u16()),
			TypeModifier:         int32(c.u32()),
			Format:               int16(c.u16()),
		}
		if c.err != nil {
			break
		}
		if f.Format != 0 && f.Format != 1 {
			c.fail(fmt.Sprintf("column %d: invalid format %d", i, f.Format))
			break
		}
		if dst != nil {
			f.Name = string(name)
			*dst = append(*dst, f)
		}
	}
	if err := c.done(); err != nil {
		return 0, err
	}
	return n, nil
}

// AppendRowDescription appends a RowDescription message (sent by servers).
func AppendRowDescription(dst []byte, fields []FieldDescription) ([]byte, error) {
	orig := len(dst)
	dst, start := BeginMessage(dst, MsgRowDescription)
	if len(fields) > 1<<15-1 {
		return dst[:orig], ErrMessageTooLong
	}
	dst = AppendInt16(dst, int16(len(fields)))
	var err error
	for _, f := range fields {
		if dst, err = AppendCString(dst, f.Name); err != nil {
			return dst[:orig], err
		}
		dst = AppendUint32(dst, f.TableOID)
		dst = AppendInt16(dst, int16(f.TableAttributeNumber))
		dst = AppendUint32(dst, f.DataTypeOID)
		dst = AppendInt16(dst, f.DataTypeSize)
		dst = AppendInt32(dst, f.TypeModifier)
		dst = AppendInt16(dst, f.Format)
	}
	return FinishMessage(dst, start)
}
