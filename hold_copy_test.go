package pgline

// A COPY holds the connection while it runs: a cancel meant for the
// statement before it must not reach its caller as a bare 57014.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"
)

// gateSlowLines is a reader of n lines "i\tv\n" (ids from base), one line
// every d: a COPY FROM STDIN that is in progress on the server for n*d.
type gateSlowLines struct {
	base, i, n int
	d          time.Duration
}

func (s *gateSlowLines) Read(p []byte) (int, error) {
	if s.i >= s.n {
		return 0, io.EOF
	}
	if s.i > 0 {
		time.Sleep(s.d)
	}
	s.i++
	return copy(p, fmt.Sprintf("%d\tv\n", s.base+s.i)), nil
}

// TestCopyHitByOthersCancel: A's statement outlives its ctx and
// its drain sends a CancelRequest (after cancel_grace) while B's COPY,
// queued behind A, is already in the server's input. PostgreSQL signals
// the backend twice per CancelRequest (pid, then process group); the
// second signal often lands once A has ended, on B (the server log shows
// B's COPY canceled). B's ctx is alive: per ErrCanceledByOther's doc ("A
// 57014 is never reported to a caller whose ctx is alive without this
// error while one of pgline's cancels was under way") its error must wrap
// ErrCanceledByOther, as a plain statement's does (the Exec subtest:
// resent, the caller never sees it). The COPY paths (startCopyIn, the
// copyIn reader's readSimple, readCopyOut) must mark it too (without
// strayCancel, B got a bare 57014). (CopyFrom's describe, which absorbs
// nothing, runs first, and the backend is idle when the late signal lands.)
// A storm: up to 40 rounds per kind to catch the late signal.
func TestCopyHitByOthersCancel(t *testing.T) {
	storm(t)
	kinds := map[string]func(ctx context.Context, c *Conn, round int) error{
		"CopyFromReader": func(ctx context.Context, c *Conn, round int) error {
			_, err := c.CopyFromReader(ctx, "COPY gate_cv(id, k) FROM STDIN", &gateSlowLines{base: round * 100, n: 8, d: 3 * time.Millisecond})
			return err
		},
		"CopyFrom": func(ctx context.Context, c *Conn, round int) error {
			i := 0
			_, err := c.CopyFrom(ctx, Identifier{"gate_cv"}, []string{"id"}, CopyFromFunc(func() ([]any, error) {
				if i == 8 {
					return nil, nil
				}
				i++
				if i > 1 {
					time.Sleep(3 * time.Millisecond)
				}
				return []any{int32(round*100 + i)}, nil
			}))
			return err
		},
		"CopyTo": func(ctx context.Context, c *Conn, round int) error {
			var sb strings.Builder
			_, err := c.CopyTo(ctx, &sb, "COPY (SELECT g, pg_sleep(0.003) FROM generate_series(1, 8) g) TO STDOUT")
			return err
		},
		// For comparison: a plain statement hit the same way is sent again
		// or marked.
		"Exec": func(ctx context.Context, c *Conn, round int) error {
			_, err := c.Exec(ctx, "SELECT pg_sleep(0.024)")
			return err
		},
	}
	for _, name := range []string{"CopyFromReader", "CopyFrom", "CopyTo", "Exec"} {
		run := kinds[name]
		t.Run(name, func(t *testing.T) {
			c := connect(t, srv.DSN("cancel_grace=5ms"))
			ctx := testCtx(t)
			logFrom := fileSize(srv.LogFile)
			defer func() {
				if testing.Verbose() {
					b, _ := os.ReadFile(srv.LogFile)
					lines := strings.Split(string(b[logFrom:]), "\n")
					n := map[string]int{}
					for i, l := range lines {
						if strings.Contains(l, "canceling statement") && i+1 < len(lines) {
							st := lines[i+1]
							if j := strings.Index(st, "STATEMENT:"); j >= 0 {
								st = st[j:]
							} else if strings.Contains(st, "CONTEXT:  COPY") {
								st = "COPY ... FROM STDIN (B)"
							}
							n[st]++
						}
					}
					t.Logf("server log, statements canceled: %v", n)
				}
			}()
			effectsTable(t, c, "gate_cv")
			var bare, marked, ok, other int
			var first string
			deadline := time.Now().Add(5 * time.Second)
			round := 0
			for ; time.Now().Before(deadline) && round < 40; round++ {
				aDone := make(chan error, 1)
				go func() {
					actx, cancel := context.WithTimeout(context.Background(), 3*time.Millisecond)
					defer cancel()
					_, err := c.Exec(actx, "SELECT pg_sleep(0.03) /* A */")
					aDone <- err
				}()
				time.Sleep(time.Millisecond) // A first
				bctx, bcancel := context.WithTimeout(ctx, 10*time.Second)
				err := run(bctx, c, round)
				alive := bctx.Err() == nil
				bcancel()
				<-aDone
				var pgErr *PgError
				switch {
				case err == nil:
					ok++
				case alive && errors.As(err, &pgErr) && pgErr.Code == "57014" && !errors.Is(err, ErrCanceledByOther):
					bare++
					if first == "" {
						first = fmt.Sprintf("round %d: B (%s, ctx alive) failed with %v; errors.Is(err, ErrCanceledByOther)=%v, SafeToRetry=%v",
							round, name, err, errors.Is(err, ErrCanceledByOther), session.SafeToRetry(err))
					}
				case errors.Is(err, ErrCanceledByOther):
					marked++
				default:
					other++
					t.Logf("round %d: B: %v", round, err)
				}
			}
			t.Logf("%d rounds: B ok %d, bare 57014 %d, marked ErrCanceledByOther %d, other %d", round, ok, bare, marked, other)
			if bare > 0 {
				t.Errorf("%s", first)
			}
			var one int
			if err := c.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
				t.Errorf("after: %v", err)
			}
		})
	}
}

// fileSize is the size of the file at p, 0 when it cannot be read.
func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}
