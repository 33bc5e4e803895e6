package pgtype

// OIDs of the built-in PostgreSQL types this package knows. Types without a
// fixed OID (citext, enums, domains over unknown types) are handled as text.
const (
	BoolOID        = 16
	ByteaOID       = 17
	NameOID        = 19
	Int8OID        = 20
	Int2OID        = 21
	Int4OID        = 23
	TextOID        = 25
	OIDOID         = 26
	JSONOID        = 114
	Float4OID      = 700
	Float8OID      = 701
	UnknownOID     = 705
	BPCharOID      = 1042
	VarcharOID     = 1043
	DateOID        = 1082
	TimeOID        = 1083
	TimestampOID   = 1114
	TimestamptzOID = 1184
	IntervalOID    = 1186
	NumericOID     = 1700
	UUIDOID        = 2950
	JSONBOID       = 3802
	CIDROID        = 650
	InetOID        = 869
	MacaddrOID     = 829
	Macaddr8OID    = 774
	RecordOID      = 2249
	Int4RangeOID   = 3904
	NumRangeOID    = 3906
	TsRangeOID     = 3908
	TstzRangeOID   = 3910
	DateRangeOID   = 3912
	Int8RangeOID   = 3926
	PointOID       = 600
	LsegOID        = 601
	PathOID        = 602
	BoxOID         = 603
	PolygonOID     = 604
	LineOID        = 628
	CircleOID      = 718
	BitOID         = 1560
	VarbitOID      = 1562
	TimetzOID      = 1266

	Int4MultirangeOID = 4451
	NumMultirangeOID  = 4532
	TsMultirangeOID   = 4533
	TstzMultirangeOID = 4534
	DateMultirangeOID = 4535
	Int8MultirangeOID = 4536

	JSONArrayOID        = 199
	BoolArrayOID        = 1000
	ByteaArrayOID       = 1001
	NameArrayOID        = 1003
	Int2ArrayOID        = 1005
	Int4ArrayOID        = 1007
	TextArrayOID        = 1009
	BPCharArrayOID      = 1014
	VarcharArrayOID     = 1015
	Int8ArrayOID        = 1016
	Float4ArrayOID      = 1021
	Float8ArrayOID      = 1022
	OIDArrayOID         = 1028
	TimestampArrayOID   = 1115
	DateArrayOID        = 1182
	TimeArrayOID        = 1183
	TimestamptzArrayOID = 1185
	IntervalArrayOID    = 1187
	NumericArrayOID     = 1231
	UUIDArrayOID        = 2951
	JSONBArrayOID       = 3807
	CIDRArrayOID        = 651
	InetArrayOID        = 1041
	MacaddrArrayOID     = 1040
	Macaddr8ArrayOID    = 775
	RecordArrayOID      = 2287
	Int4RangeArrayOID   = 3905
	NumRangeArrayOID    = 3907
	TsRangeArrayOID     = 3909
	TstzRangeArrayOID   = 3911
	DateRangeArrayOID   = 3913
	Int8RangeArrayOID   = 3927
	PointArrayOID       = 1017
	LsegArrayOID        = 1018
	PathArrayOID        = 1019
	BoxArrayOID         = 1020
	PolygonArrayOID     = 1027
	LineArrayOID        = 629
	CircleArrayOID      = 719
	BitArrayOID         = 1561
	VarbitArrayOID      = 1563
	TimetzArrayOID      = 1270

	Int4MultirangeArrayOID = 6150
	NumMultirangeArrayOID  = 6151
	TsMultirangeArrayOID   = 6152
	TstzMultirangeArrayOID = 6153
	DateMultirangeArrayOID = 6155
	Int8MultirangeArrayOID = 6157
)

// kind is the codec family of a type.
type kind uint8

const (
	kindText kind = iota // text, varchar, bpchar, name, unknown and every type this package does not know
	kindBool
	kindInt // int2, int4, int8, oid
	kindFloat
	kindNumeric
	kindBytea
	kindUUID
	kindDate
	kindTimestamp
	kindTimestamptz
	kindTime
	kindInterval
	kindJSON
	kindJSONB
	kindArray
	kindInet    // inet, cidr
	kindMacaddr // macaddr (size 6), macaddr8 (size 8)
	kindRange   // elem is the subtype
	kindHstore  // registered by name
	kindPoint
	kindLseg
	kindBox
	kindPath
	kindPolygon
	kindLine
	kindCircle
	kindBits       // bit and varbit
	kindTimetz     // time of day with time zone
	kindMultirange // elem is the range type
	kindComposite  // fields, or none for record (the field OIDs come with each value)
	kindCodec      // a user Codec
)

// typeInfo describes one type OID.
type typeInfo struct {
	oid   uint32
	base  uint32 // the built-in type whose codec this is: oid itself, or a domain's base type
	name  string
	kind  kind
	size  int       // binary width of fixed-size types (int2 2, float4 4, ...), 0 otherwise
	elem  *typeInfo // element type of an array type, subtype of a range type
	known bool      // false for OIDs this package does not know (decoded as text)

	fields []*typeInfo // field types of a registered composite type
	nest   int         // record: how deep this anonymous record is nested in others (see recordFieldType)
	codec  Codec       // kindCodec: the user's codec
}

// builtinTypes lists the scalar types and their array types.
var builtinTypes = []struct {
	oid, arrayOID uint32
	name          string
	kind          kind
	size          int
}{
	{BoolOID, BoolArrayOID, "bool", kindBool, 1},
	{ByteaOID, ByteaArrayOID, "bytea", kindBytea, 0},
	{NameOID, NameArrayOID, "name", kindText, 0},
	{Int8OID, Int8ArrayOID, "int8", kindInt, 8},
	{Int2OID, Int2ArrayOID, "int2", kindInt, 2},
	{Int4OID, Int4ArrayOID, "int4", kindInt, 4},
	{TextOID, TextArrayOID, "text", kindText, 0},
	{OIDOID, OIDArrayOID, "oid", kindInt, 4},
	{JSONOID, JSONArrayOID, "json", kindJSON, 0},
	{Float4OID, Float4ArrayOID, "float4", kindFloat, 4},
	{Float8OID, Float8ArrayOID, "float8", kindFloat, 8},
	{UnknownOID, 0, "unknown", kindText, 0},
	{BPCharOID, BPCharArrayOID, "bpchar", kindText, 0},
	{VarcharOID, VarcharArrayOID, "varchar", kindText, 0},
	{DateOID, DateArrayOID, "date", kindDate, 4},
	{TimeOID, TimeArrayOID, "time", kindTime, 8},
	{TimestampOID, TimestampArrayOID, "timestamp", kindTimestamp, 8},
	{TimestamptzOID, TimestamptzArrayOID, "timestamptz", kindTimestamptz, 8},
	{IntervalOID, IntervalArrayOID, "interval", kindInterval, 16},
	{NumericOID, NumericArrayOID, "numeric", kindNumeric, 0},
	{UUIDOID, UUIDArrayOID, "uuid", kindUUID, 16},
	{JSONBOID, JSONBArrayOID, "jsonb", kindJSONB, 0},
	{InetOID, InetArrayOID, "inet", kindInet, 0},
	{CIDROID, CIDRArrayOID, "cidr", kindInet, 0},
	{MacaddrOID, MacaddrArrayOID, "macaddr", kindMacaddr, 6},
	{Macaddr8OID, Macaddr8ArrayOID, "macaddr8", kindMacaddr, 8},
	{RecordOID, RecordArrayOID, "record", kindComposite, 0},
	{PointOID, PointArrayOID, "point", kindPoint, 16},
	{LsegOID, LsegArrayOID, "lseg", kindLseg, 32},
	{PathOID, PathArrayOID, "path", kindPath, 0},
	{BoxOID, BoxArrayOID, "box", kindBox, 32},
	{PolygonOID, PolygonArrayOID, "polygon", kindPolygon, 0},
	{LineOID, LineArrayOID, "line", kindLine, 24},
	{CircleOID, CircleArrayOID, "circle", kindCircle, 24},
	{BitOID, BitArrayOID, "bit", kindBits, 0},
	{VarbitOID, VarbitArrayOID, "varbit", kindBits, 0},
	{TimetzOID, TimetzArrayOID, "timetz", kindTimetz, 12},
	{Int4MultirangeOID, Int4MultirangeArrayOID, "int4multirange", kindMultirange, 0},
	{Int8MultirangeOID, Int8MultirangeArrayOID, "int8multirange", kindMultirange, 0},
	{NumMultirangeOID, NumMultirangeArrayOID, "nummultirange", kindMultirange, 0},
	{TsMultirangeOID, TsMultirangeArrayOID, "tsmultirange", kindMultirange, 0},
	{TstzMultirangeOID, TstzMultirangeArrayOID, "tstzmultirange", kindMultirange, 0},
	{DateMultirangeOID, DateMultirangeArrayOID, "datemultirange", kindMultirange, 0},
}

// builtinRanges lists the range types and their subtypes.
var builtinRanges = []struct {
	oid, arrayOID, sub uint32
	name               string
}{
	{Int4RangeOID, Int4RangeArrayOID, Int4OID, "int4range"},
	{Int8RangeOID, Int8RangeArrayOID, Int8OID, "int8range"},
	{NumRangeOID, NumRangeArrayOID, NumericOID, "numrange"},
	{TsRangeOID, TsRangeArrayOID, TimestampOID, "tsrange"},
	{TstzRangeOID, TstzRangeArrayOID, TimestamptzOID, "tstzrange"},
	{DateRangeOID, DateRangeArrayOID, DateOID, "daterange"},
}

// multirangeRange returns the range type OID of the built-in multirange
// type oid, and 0 for any other OID.
func multirangeRange(oid uint32) uint32 {
	switch oid {
	case Int4MultirangeOID:
		return Int4RangeOID
	case Int8MultirangeOID:
		return Int8RangeOID
	case NumMultirangeOID:
		return NumRangeOID
	case TsMultirangeOID:
		return TsRangeOID
	case TstzMultirangeOID:
		return TstzRangeOID
	case DateMultirangeOID:
		return DateRangeOID
	}
	return 0
}
