package pgline

import (
	"testing"

	"github.com/pgline/pgline/internal/session"

	"github.com/pgline/pgline/internal/wire"
)

// TestServerErrorAllocs: decoding an ErrorResponse (parseSrvErr) costs
// what making its *PgError from the fields costs, and a NoticeResponse
// what making its *Notice does: neither the fields nor the srvErr the
// session reads is moved to the heap on the way, as they were when the
// session handed them to the API by pointer (three allocations more per
// failed statement, one more per notice, than before the session was
// split from Conn).
func TestServerErrorAllocs(t *testing.T) {
	// What the API's error costs: the fields' strings, the *PgError.
	var sink error
	apiCost := func(body []byte) float64 {
		return testing.AllocsPerRun(100, func() {
			f, err := wire.ParseErrorFields(body)
			if err != nil {
				t.Fatal(err)
			}
			sink = pgErrorFromFields(&f)
		})
	}
	f := wire.ErrorFields{Severity: "ERROR", SeverityV: "ERROR", Code: "22012", Message: "division by zero", Routine: "int4div"}
	body, err := wire.AppendErrorFields(nil, wire.MsgErrorResponse, f)
	if err != nil {
		t.Fatal(err)
	}
	body = body[5:] // the message's body
	if n := testing.AllocsPerRun(100, func() {
		e, err := session.ParseSrvErr(body)
		if err != nil {
			t.Fatal(err)
		}
		sink = e.Err
	}) - apiCost(body); n > 0 {
		t.Errorf("parseSrvErr: %v allocations more than the *PgError's, want none", n)
	}
	if _, ok := sink.(*PgError); !ok {
		t.Fatalf("parseSrvErr's err is %T, want *PgError", sink)
	}

	cfg, err := ParseConfig(srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	var got *Notice
	cfg.OnNotice = func(n *Notice) { got = n }
	c, err := ConnectConfig(testCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	notice, err := wire.AppendErrorFields(nil, wire.MsgNoticeResponse, wire.ErrorFields{Severity: "NOTICE", SeverityV: "NOTICE", Code: "00000", Message: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	notice = notice[5:]
	if n := testing.AllocsPerRun(100, func() {
		if err := c.s.HandleAsync(wire.MsgNoticeResponse, notice); err != nil {
			t.Fatal(err)
		}
	}) - apiCost(notice); n > 0 {
		t.Errorf("a notice: %v allocations more than its *Notice's, want none", n)
	}
	if got == nil || got.Message != "hello" || got.Code != "00000" {
		t.Fatalf("OnNotice got %+v", got)
	}
}
