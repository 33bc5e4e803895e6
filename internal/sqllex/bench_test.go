package sqllex

import "testing"

// benchSQL is a typical query of about 100 bytes.
const benchSQL = "SELECT id, name, email FROM users WHERE id = $1 AND status = 'active' ORDER BY created_at LIMIT 10"

func BenchmarkScan(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchSQL)))
	for b.Loop() {
		Scan(benchSQL)
	}
}
