package wire_test

import (
	"encoding/binary"
	"fmt"

	"github.com/pgline/pgline/internal/wire"
)

// ExampleBindBuilder encodes a Bind's values straight into the message:
// an int8 in binary, a NULL, and text, with binary results.
func ExampleBindBuilder() {
	var b wire.BindBuilder
	buf, err := b.Begin(nil, "", "stmt1", 3)
	if err != nil {
		panic(err)
	}
	buf = b.BeginParam(buf)
	buf = binary.BigEndian.AppendUint64(buf, 42)
	buf, _ = b.FinishParam(buf, 1, false)
	buf = b.BeginParam(buf)
	buf, _ = b.FinishParam(buf, 0, true)
	buf = b.BeginParam(buf)
	buf = append(buf, "hi"...)
	buf, _ = b.FinishParam(buf, 0, false)
	buf, err = b.Finish(buf, []int16{1})
	if err != nil {
		panic(err)
	}
	fmt.Printf("% x\n", buf)
	// Output:
	// 42 00 00 00 2f 00 73 74 6d 74 31 00 00 03 00 01 00 00 00 00 00 03 00 00 00 08 00 00 00 00 00 00 00 2a ff ff ff ff 00 00 00 02 68 69 00 01 00 01
}
