package wire

// Binary COPY format: the payload of the CopyData messages of a COPY ...
// (FORMAT binary), cut into messages anywhere.
//
//	header:  11-byte signature "PGCOPY\n\377\r\n\000", int32 flags, int32 header extension length, extension
//	tuple:   int16 field count, per field int32 length (-1 for NULL) and that many bytes
//	trailer: int16 -1
//
// Protocol flow (COPY FROM STDIN, binary): the header, then one tuple per
// row, then the trailer, in CopyData messages before CopyDone.

// CopyBinaryHeader is the header of a binary COPY stream with no flags set
// and no header extension: the signature, int32 0 and int32 0.
const CopyBinaryHeader = "PGCOPY\n\xff\r\n\x00" + "\x00\x00\x00\x00" + "\x00\x00\x00\x00"

// AppendCopyBinaryHeader appends CopyBinaryHeader.
func AppendCopyBinaryHeader(dst []byte) []byte {
	return append(dst, CopyBinaryHeader...)
}

// AppendCopyBinaryTrailer appends the trailer that ends a binary COPY
// stream: int16 -1.
func AppendCopyBinaryTrailer(dst []byte) []byte {
	return append(dst, 0xff, 0xff)
}
