// Package pgtype converts between PostgreSQL values and Go values: binary
// (and text) decoding of result columns through scan plans, and binary
// encoding of query arguments for the parameter types the server
// described. It is the codec layer of pgline and does not depend on it.
// docs/types.md in pgline's repository shows common types in use, with
// tested code: uuid, decimal, JSON, arrays, enums, composites, ranges.
//
// # Using it
//
// A Map knows the built-in types by OID. For each result column, ask
// ResultFormat which format to request, make a ScanPlan once per column and
// destination type with PlanScan, and reuse it for every row: a plan is
// specialised for one destination type, so scanning does no type switch and
// decoding integers, floats, bools and times allocates nothing (a string
// allocates the string). Encode appends an argument to a buffer.
//
//	m := pgtype.NewMap()
//	var n int64
//	plan, err := m.PlanScan(pgtype.Int8OID, 1, &n)
//	err = plan.Scan(columnBytes, &n)
//	buf, format, null, err := m.Encode(pgtype.Int8OID, 42, buf)
//
// # Scanning: PostgreSQL type → Go destinations
//
//	bool                      *bool
//	int2, int4, int8, oid     *int, *int8 … *int64, *uint … *uint64 (range-checked), *string (decimal)
//	float4, float8            *float64, *float32 (NaN and ±Inf kept; a finite float8 beyond float32, or a
//	                          non-zero one that float32 rounds to 0, is an error, as float8::float4 is)
//	numeric                   *string, *float64, *float32 (rounded once to the destination, and an error
//	                          beyond its range, as numeric::float8 and numeric::float4), *big.Rat, *big.Int
//	                          and Go integers (error when fractional or out of range), *Numeric;
//	                          NaN/±Infinity go into floats, strings ("NaN", "Infinity") and *Numeric only
//	text, varchar, bpchar,
//	name, citext, enums and
//	every unknown OID (text)  *string, *[]byte (a copy), and parsed into integers, floats and *bool; the
//	                          array of an unknown type into slices of strings (not of []byte: its
//	                          elements' text is not the bytes of a domain over bytea)
//	bytea                     *[]byte (a copy), *string (the raw bytes)
//	uuid                      *[16]byte, *string (8-4-4-4-12)
//	date, timestamp,
//	timestamptz               *time.Time (UTC; timestamp is its wall clock read as UTC; ±infinity is an
//	                          error), *Timestamp (which holds ±infinity)
//	time                      *time.Duration (since midnight), *Time
//	timetz                    *Timetz, *time.Time (that time of day on 0000-01-01 in a zone of the
//	                          value's offset, UTC for +00; 24:00:00 is 0000-01-02 00:00:00), *string
//	interval                  *time.Duration (a day counts as 24h; months are an error), *Interval
//	json, jsonb               *[]byte, *json.RawMessage (copies), *string, any other pointer via json.Unmarshal
//	arrays                    *[]E for any E the element type scans into, nested slices (*[][]E …, up
//	                          to 6 levels) for multi-dimensional arrays; NULL elements need a
//	                          NULL-capable E ([]*int32, []sql.NullString); NULL arrays set nil; an
//	                          empty array fits any depth; lower bounds are not kept; arrays of json,
//	                          composite and multirange types are one-dimensional in Go
//	inet, cidr                *netip.Prefix (host bits kept: inet 10.0.0.5/8), *netip.Addr (a full
//	                          mask only, else an error), *net.IPNet, *string
//	macaddr, macaddr8         *net.HardwareAddr, *string
//	int4range, int8range,
//	numrange, tsrange,
//	tstzrange, daterange      *Range[T] for any T the subtype scans into (Range[int32], Range[int64],
//	                          Range[Numeric], Range[time.Time], Range[Timestamp] …), *string
//	int4multirange, …,
//	datemultirange            *Multirange[T] or *[]Range[T] for any T the subtype scans into (NULL
//	                          sets nil), *string
//	point, lseg, box, path,
//	polygon, line, circle     *Point, *Lseg, *Box, *Path, *Polygon, *Line, *Circle, *string
//	bit, varbit               *Bits, *string ("1011")
//	record, composite types   *[]any, a pointer to a struct (exported fields in field order); record
//	                          (ROW(…)) is read in binary and carries its field types: records nested in
//	                          it are decoded too, and a field of a type this Map reads only in text
//	                          (money, an unregistered enum) is an error matching ErrRecordField; named
//	                          composites need RegisterComposite
//	hstore (RegisterName)     *map[string]*string, *map[string]string (a NULL value is an error)
//	enums (RegisterEnum)      *string, *[]byte
//	domains                   as their base type (result columns come described with it)
//
// Every type also scans into: *any (DecodeValue's default Go type), a
// sql.Scanner (given the database/sql driver value: int64, float64, bool,
// []byte, string or time.Time; it takes precedence over everything else,
// so sql.NullString, sql.Null[T] … work), *sql.RawBytes (aliases the row
// bytes until the next read), **T (NULL sets nil, otherwise a new T), *string and
// *[]byte (the PostgreSQL text form), and named types of a basic kind
// (type ID int64). SQL NULL into any other destination is an error that
// matches ErrNull; a value that does not fit, one that matches
// ErrOutOfRange; a type the Map does not know into a destination only its
// codec could fill, an UnknownTypeError. Text-format (format 0) values are parsed for every type
// with a binary codec, in the server's default output styles (DateStyle
// ISO, IntervalStyle postgres; timestamptz text carries its offset).
//
// # Encoding: Go argument → PostgreSQL parameter type
//
//	bool                      bool
//	int2, int4, int8, oid     Go integers (range-checked), integral floats
//	float4, float8            floats, integers exactly representable (float4: a float64 beyond its range,
//	                          or non-zero that it rounds to 0, is an error)
//	numeric                   Go integers, floats (NaN, ±Inf), *big.Int, *big.Rat (finite decimals), Numeric
//	text types, unknown OIDs  string, []byte, and numbers, bools, geometric values, Bits and Timetz as
//	                          their text; for an unknown OID a []byte is the value's binary form, sent
//	                          as is (the bytes of a domain over bytea, the label of an enum), except for
//	                          the built-in types without a codec here (money, pg_lsn, ...), none of
//	                          which is bytes: for them it is the text, as a string is
//	bytea                     []byte, string
//	uuid                      [16]byte (or a named [16]byte type)
//	date, timestamp,
//	timestamptz               time.Time (date: its date in its location; timestamp: its wall clock;
//	                          timestamptz: its instant), Timestamp for ±infinity
//	time                      time.Duration since midnight, Time, time.Time (its wall clock's time of day)
//	timetz                    Timetz, time.Time (its wall clock's time of day and its zone's offset)
//	interval                  time.Duration, Interval
//	json, jsonb               string, []byte, json.RawMessage (the document), anything else via json.Marshal
//	arrays                    slices of element arguments ([]int64, []*string with nil for NULL, []any);
//	                          nested slices for multi-dimensional arrays (rectangular, up to 6 levels)
//	inet, cidr                netip.Addr, netip.Prefix (cidr: no host bits), net.IP, *net.IPNet
//	macaddr, macaddr8         net.HardwareAddr (6 bytes for macaddr8 are expanded to EUI-64)
//	range types               Range[T] with T an argument type of the subtype
//	multirange types          Multirange[T] or []Range[T] with T an argument type of the subtype (nil for
//	                          NULL)
//	geometric types           Point, Lseg, Box, Path, Polygon, Line, Circle (their own type; a path or
//	                          polygon needs a point, a line A or B non-zero, a circle a radius ≥ 0)
//	bit, varbit               Bits; a string of 0 and 1 goes as text
//	composite types           a struct (exported fields in order) or []any, after RegisterComposite; in
//	                          binary, or as a text literal when a field can only go as text (a string
//	                          for an int4 field, any value for a field of a type this Map does not know)
//	hstore                    map[string]*string (nil for NULL), map[string]string
//
// # Types without a fixed OID
//
// Enums, composite types, domains and extension types get their OIDs when
// they are created. Unregistered, they are requested and scanned as text.
// Register them on the Map (pgline's Conn.LoadType does it by name, from
// the catalog): RegisterEnum, RegisterDomain, RegisterComposite,
// RegisterRange, RegisterArray, RegisterName for the extension types this
// package has codecs for (hstore, citext), and RegisterType with a Codec
// of one's own for anything else. A Map is safe for concurrent use,
// registration included; register a type before making the plans that
// need it.
//
// Values this package reads in text format (a composite or array holding
// a type with no binary codec here, an unregistered domain's array) are
// the server's output for the session's settings. Floats among them are
// exact with extra_float_digits at 1 (the default since PostgreSQL 12) or
// more; a role or database that sets it lower has the server round them
// (to 15 significant digits at 0), as its text output always does.
//
// A Go string goes to a text, bytea or json parameter as its bytes, and to
// any other parameter type in text format, for the server to parse ("123"
// for int8, a UUID text for uuid). nil, nil pointers, nil slices and
// driver.Valuer results of nil are SQL NULL; a driver.Valuer is asked for
// its value first (as in database/sql, also a nil pointer whose Value
// method has a pointer receiver); pointers are followed. An argument with no
// encoding for the parameter type is an *EncodeError naming both types.
//
// # Values that may be NULL, with pgx's names
//
// Text, Int2, Int4, Int8, Float4, Float8, Bool, UUID, Date and Timestamptz
// have the fields of pgx's types of those names (String and Valid, Int32
// and Valid, ...), and Numeric, Timestamp, Interval and Time have pgx's
// Valid field: code written for pgx's pgtype, sqlc's generated models
// among it, compiles against this package. NULL scans as the zero value
// (Valid false), any other value sets Valid; as an argument the zero value
// is NULL, and a value with Valid false but another field set is an
// error, not a NULL. Each is a sql.Scanner and driver.Valuer for
// database/sql and marshals to JSON as null or its value.
package pgtype
