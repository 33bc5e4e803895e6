package pgtest

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestBinDirRunsThatVersion: Options.BinDir starts the server of that
// directory (each major version PGLINE_PG_VERSIONS holds, with TLS and a
// SCRAM user), and a directory without the programs is an error naming
// it.
func TestBinDirRunsThatVersion(t *testing.T) {
	if os.Getenv(VersionsEnv) == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set; .ci/run installs the server versions", VersionsEnv)
		}
		t.Skipf("%s is not set (a directory with one folder of server binaries per major version; see .ci/run)", VersionsEnv)
	}
	found := 0
	for _, major := range []int{13, 16, 17, 18} {
		dir := BinDirOf(major)
		if dir == "" {
			continue
		}
		found++
		t.Run(fmt.Sprint("pg", major), func(t *testing.T) {
			s, err := Start(Options{BinDir: dir, TLS: true, Users: []User{{Name: "u", Password: "p", Method: "scram-sha-256"}}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Stop()
			if got := s.Version() / 10000; got != major {
				t.Fatalf("Version() = %d from %s, want major %d", s.Version(), dir, major)
			}
		})
	}
	if found == 0 {
		t.Fatalf("%s holds no version of 13, 16, 17, 18", os.Getenv(VersionsEnv))
	}
	_, err := Start(Options{BinDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "Options.BinDir") {
		t.Fatalf("Start with an empty BinDir: %v, want an error naming Options.BinDir", err)
	}
}
