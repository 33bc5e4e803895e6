package wire

import (
	"encoding/binary"
	"math"
)

// CopyData built in place. AppendCopyData copies its payload; a caller
// that fills one buffer with payload in place, sends it as one message and
// starts over, reserves the header at the front instead:
//
//	msg := make([]byte, CopyDataHeaderSize, size) // header reserved, once
//	msg = append(msg, payload...)                 // in place, any number of times
//	err := FrameCopyData(msg)                     // header written; msg is one CopyData
//	... write msg, then msg = msg[:CopyDataHeaderSize] and fill it again

// CopyDataHeaderSize is the size of the header of a CopyData message, its
// type byte 'd' and its int32 length: the room to reserve at the front of
// a buffer for FrameCopyData.
const CopyDataHeaderSize = 5

// FrameCopyData writes the CopyData header into msg[:CopyDataHeaderSize],
// making msg, the reserved header then the payload, one whole CopyData
// message. The reserved bytes may hold anything before; writing them again
// each time lets one buffer carry message after message. It returns
// ErrMessageTooLong, with msg untouched, if the length would not fit in
// its field, and panics if msg is shorter than CopyDataHeaderSize, like a
// slice index.
func FrameCopyData(msg []byte) error {
	return frameCopyDataLimited(msg, math.MaxInt32)
}

// frameCopyDataLimited is FrameCopyData with the length limit as a
// parameter, so that tests reach the error path without 2 GiB messages.
func frameCopyDataLimited(msg []byte, limit int) error {
	_ = msg[CopyDataHeaderSize-1] // panics before anything is written
	n := len(msg) - 1
	if n > limit {
		return ErrMessageTooLong
	}
	msg[0] = MsgCopyData
	binary.BigEndian.PutUint32(msg[1:CopyDataHeaderSize], uint32(n))
	return nil
}
