package pgtype

import "strings"

// builtinTypeNames lists the built-in PostgreSQL types (with fixed OIDs,
// from PostgreSQL's pg_type.dat) that this package has no codec for, with
// their array types, so that DatabaseTypeName names them rather than
// giving their OID. Values of these types are decoded as text.
var builtinTypeNames = []struct {
	oid, arrayOID uint32
	name          string // pg_type.typname; the array type's is "_" + name
}{
	{18, 1002, "char"},
	{22, 1006, "int2vector"},
	{24, 1008, "regproc"},
	{27, 1010, "tid"},
	{28, 1011, "xid"},
	{29, 1012, "cid"},
	{30, 1013, "oidvector"},
	{32, 0, "pg_ddl_command"},
	{142, 143, "xml"},
	{194, 0, "pg_node_tree"},
	{790, 791, "money"},
	{1033, 1034, "aclitem"},
	{1790, 2201, "refcursor"},
	{2202, 2207, "regprocedure"},
	{2203, 2208, "regoper"},
	{2204, 2209, "regoperator"},
	{2205, 2210, "regclass"},
	{2206, 2211, "regtype"},
	{2275, 1263, "cstring"},
	{2277, 0, "anyarray"},
	{2278, 0, "void"},
	{2970, 2949, "txid_snapshot"},
	{3220, 3221, "pg_lsn"},
	{3361, 0, "pg_ndistinct"},
	{3402, 0, "pg_dependencies"},
	{3614, 3643, "tsvector"},
	{3615, 3645, "tsquery"},
	{3642, 3644, "gtsvector"},
	{3734, 3735, "regconfig"},
	{3769, 3770, "regdictionary"},
	{4072, 4073, "jsonpath"},
	{4089, 4090, "regnamespace"},
	{4096, 4097, "regrole"},
	{4191, 4192, "regcollation"},
	{4600, 0, "pg_brin_bloom_summary"},
	{4601, 0, "pg_brin_minmax_multi_summary"},
	{5017, 0, "pg_mcv_list"},
	{5038, 5039, "pg_snapshot"},
	{5069, 271, "xid8"},
}

// builtinDatabaseTypeNames maps the OIDs of builtinTypeNames and of their
// array types to the names DatabaseTypeName gives them ("XML", "_XML").
var builtinDatabaseTypeNames = func() map[uint32]string {
	names := make(map[uint32]string, 2*len(builtinTypeNames))
	for _, b := range builtinTypeNames {
		names[b.oid] = strings.ToUpper(b.name)
		if b.arrayOID != 0 {
			names[b.arrayOID] = "_" + strings.ToUpper(b.name)
		}
	}
	return names
}()
