package wire_test

import (
	"bytes"
	"fmt"

	"github.com/pgline/pgline/internal/wire"
)

// Example encodes an extended-protocol query, then reads a scripted reply.
func Example() {
	// Client side: queue Parse, Bind, Execute and Sync in one buffer.
	var out []byte
	out, _ = wire.AppendParse(out, "", "SELECT $1::text, NULL", nil)
	out, _ = wire.AppendBind(out, "", "", nil, [][]byte{[]byte("hi")}, nil)
	out, _ = wire.AppendExecute(out, "", 0)
	out = wire.AppendSync(out)
	fmt.Println("request bytes:", len(out))

	// Server side: the reply a server would send.
	var in []byte
	in, _ = wire.AppendEmpty(in, wire.MsgParseComplete)
	in, _ = wire.AppendEmpty(in, wire.MsgBindComplete)
	in, _ = wire.AppendDataRow(in, [][]byte{[]byte("hi"), nil})
	in, _ = wire.AppendCommandComplete(in, "SELECT 1")
	in = wire.AppendReadyForQuery(in, wire.TxIdle)

	r := wire.NewReader(bytes.NewReader(in), 0, 0)
	for {
		typ, body, err := r.Next()
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch typ {
		case wire.MsgDataRow:
			row, err := wire.ParseDataRow(body)
			if err != nil {
				fmt.Println("error:", err)
				return
			}
			for {
				v, isNull, ok := row.Next()
				if !ok {
					break
				}
				if isNull {
					fmt.Println("column: NULL")
				} else {
					fmt.Printf("column: %q\n", v)
				}
			}
		case wire.MsgCommandComplete:
			tag, _ := wire.ParseCommandComplete(body)
			fmt.Printf("done: %s\n", tag)
		case wire.MsgReadyForQuery:
			rfq, _ := wire.ParseReadyForQuery(body)
			fmt.Printf("ready: %c\n", rfq.TxStatus)
			return
		}
	}
	// Output:
	// request bytes: 64
	// column: "hi"
	// column: NULL
	// done: SELECT 1
	// ready: I
}
