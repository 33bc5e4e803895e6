package pgtype

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// The fixed table of built-in type names agrees with the server's pg_type:
// each OID exists with that name, and each element type's array OID is the
// one in the table. A mistyped OID fails here. (The table holds types of
// PostgreSQL 14 and later: pg_brin_*_summary.)
func TestBuiltinTypeNamesMatchServer(t *testing.T) {
	srv.NeedVersion(t, 14, "the table's pg_brin_*_summary types")
	var oids []string
	for _, b := range builtinTypeNames {
		oids = append(oids, strconv.FormatUint(uint64(b.oid), 10))
		if b.arrayOID != 0 {
			oids = append(oids, strconv.FormatUint(uint64(b.arrayOID), 10))
		}
	}
	out, err := srv.Query(fmt.Sprintf("SELECT oid, typname, typarray FROM pg_type WHERE oid = ANY('{%s}'::oid[]) ORDER BY oid",
		strings.Join(oids, ",")))
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		name     string
		arrayOID uint32
	}
	server := map[uint32]row{}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Split(l, "|")
		if len(f) != 3 {
			t.Fatalf("bad line %q", l)
		}
		oid, err1 := strconv.ParseUint(f[0], 10, 32)
		arr, err2 := strconv.ParseUint(f[2], 10, 32)
		if err1 != nil || err2 != nil {
			t.Fatalf("bad line %q", l)
		}
		server[uint32(oid)] = row{f[1], uint32(arr)}
	}
	if len(server) != len(oids) {
		t.Errorf("the server has %d of the table's %d OIDs", len(server), len(oids))
	}
	m := NewMap()
	for _, b := range builtinTypeNames {
		s, ok := server[b.oid]
		switch {
		case !ok:
			t.Errorf("%s: no type with OID %d", b.name, b.oid)
		case s.name != b.name:
			t.Errorf("OID %d is %q on the server, %q in the table", b.oid, s.name, b.name)
		case s.arrayOID != b.arrayOID:
			t.Errorf("%s: array type %d on the server, %d in the table", b.name, s.arrayOID, b.arrayOID)
		}
		if b.arrayOID != 0 {
			if s, ok := server[b.arrayOID]; !ok || s.name != "_"+b.name {
				t.Errorf("%s: array OID %d is %q on the server", b.name, b.arrayOID, s.name)
			}
		}
		if _, ok := m.lookup(b.oid); ok {
			t.Errorf("%s (%d) has a codec: it does not belong in the name table", b.name, b.oid)
		}
	}
}

func TestDatabaseTypeNameBuiltinWithoutCodec(t *testing.T) {
	m := NewMap()
	for oid, want := range map[uint32]string{
		18: "CHAR", 1002: "_CHAR", BPCharOID: "BPCHAR", BPCharArrayOID: "_BPCHAR",
		142: "XML", 143: "_XML", 790: "MONEY", 791: "_MONEY", 1266: "TIMETZ", 1270: "_TIMETZ",
		1560: "BIT", 1562: "VARBIT", 600: "POINT", 601: "LSEG", 603: "BOX", 602: "PATH",
		604: "POLYGON", 628: "LINE", 718: "CIRCLE", 719: "_CIRCLE", 3614: "TSVECTOR", 3615: "TSQUERY",
		3220: "PG_LSN", 3221: "_PG_LSN", 2205: "REGCLASS", 2210: "_REGCLASS", 2206: "REGTYPE",
		24: "REGPROC", 4096: "REGROLE", 22: "INT2VECTOR", 30: "OIDVECTOR", 2970: "TXID_SNAPSHOT",
		5038: "PG_SNAPSHOT", 28: "XID", 5069: "XID8", 271: "_XID8", 29: "CID", 27: "TID",
		1033: "ACLITEM", 1034: "_ACLITEM", 1790: "REFCURSOR", 2201: "_REFCURSOR",
		4451: "INT4MULTIRANGE", 6150: "_INT4MULTIRANGE", 2278: "VOID", 2277: "ANYARRAY",
		123456: "123456", 0: "0",
	} {
		if got := m.DatabaseTypeName(oid); got != want {
			t.Errorf("DatabaseTypeName(%d) = %q, want %q", oid, got, want)
		}
	}
}
