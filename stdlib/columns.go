package stdlib

import (
	"math"
	"reflect"

	"github.com/pgline/pgline/pgtype"
)

// varHeaderSize is PostgreSQL's VARHDRSZ, added to the declared length of
// varchar, bpchar and numeric type modifiers.
const varHeaderSize = 4

// ColumnTypeDatabaseTypeName returns the PostgreSQL type name of column
// index in upper case ("INT4", "TEXT", "_INT4" for int4[], "XML", "CHAR"
// for "char" and "BPCHAR" for character(n)), or the decimal type OID for a
// type that is neither built in nor registered on the connection's type
// map (enums, domains, extension types).
func (r *Rows) ColumnTypeDatabaseTypeName(index int) string {
	return r.c.types.DatabaseTypeName(r.fields[index].DataTypeOID)
}

// ColumnTypeScanType returns the Go type of the column's non-NULL values
// as Next gives them: int64, float64, bool, []byte, string or time.Time.
func (r *Rows) ColumnTypeScanType(index int) reflect.Type {
	return r.c.types.DriverScanType(r.fields[index].DataTypeOID)
}

// ColumnTypeNullable reports ok=false: the result description does not say
// whether a column may be NULL, and asking the catalog would take a round
// trip while the rows hold the connection.
func (r *Rows) ColumnTypeNullable(index int) (nullable, ok bool) {
	return true, false
}

// ColumnTypeLength returns the declared length of varchar(n) and
// character(n) columns, math.MaxInt64 for text, bytea and varchar without
// a length, and ok=false for other types.
func (r *Rows) ColumnTypeLength(index int) (length int64, ok bool) {
	f := r.fields[index]
	switch f.DataTypeOID {
	case pgtype.TextOID, pgtype.ByteaOID:
		return math.MaxInt64, true
	case pgtype.VarcharOID, pgtype.BPCharOID:
		if f.TypeModifier < varHeaderSize {
			return math.MaxInt64, true
		}
		return int64(f.TypeModifier - varHeaderSize), true
	}
	return 0, false
}

// Unconstrained numeric (no declared precision, type modifier -1) reports
// this precision and scale: the values pgx's and lib/pq's stdlib drivers
// give it (their decoding of the modifier -1), which tools written against
// them expect. GORM's AutoMigrate, for one, compares the answer with the
// model's numeric(p, s) and changes the column only when ok is true.
const (
	unconstrainedNumericPrecision = 65535
	unconstrainedNumericScale     = 65531
)

// ColumnTypePrecisionScale returns the declared precision and scale of a
// numeric(p, s) column (the scale may be negative), and 65535, 65531 for
// numeric without a declared precision, as pgx and lib/pq do; ok is false
// for other types, numeric[] included.
func (r *Rows) ColumnTypePrecisionScale(index int) (precision, scale int64, ok bool) {
	f := r.fields[index]
	if f.DataTypeOID != pgtype.NumericOID {
		return 0, 0, false
	}
	if f.TypeModifier < varHeaderSize {
		return unconstrainedNumericPrecision, unconstrainedNumericScale, true
	}
	return numericTypmod(f.TypeModifier)
}

// numericTypmod decodes a numeric type modifier: ((p << 16) | (s & 0x7ff))
// + VARHDRSZ, the scale an 11-bit two's complement number (PostgreSQL 15
// allows scales from -1000 to 1000).
func numericTypmod(typmod int32) (precision, scale int64, ok bool) {
	if typmod < varHeaderSize {
		return 0, 0, false
	}
	m := typmod - varHeaderSize
	precision = int64(m>>16) & 0xffff
	scale = int64((m&0x7ff)^1024) - 1024
	return precision, scale, true
}
