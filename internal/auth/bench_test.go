package auth

import "testing"

// BenchmarkSCRAMExchange measures one full client exchange with PostgreSQL's
// default 4096 iterations, against the independent fake server.
func BenchmarkSCRAMExchange(b *testing.B) {
	srv := newFakeServer(b, "secret", 4096)
	b.ReportAllocs()
	for b.Loop() {
		c, err := NewSCRAM(MechSCRAMSHA256, "secret", nil, false)
		if err != nil {
			b.Fatal(err)
		}
		if err := srv.exchange(b, c, "n,,", []byte("n,,")); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMD5Password measures the md5 response.
func BenchmarkMD5Password(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		MD5Password("postgres", "secret", [4]byte{1, 2, 3, 4})
	}
}
