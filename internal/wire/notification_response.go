package wire

// NotificationResponse ('A') delivers a NOTIFY to a listening session.
//
//	int32 notifying process ID, cstring channel, cstring payload
type NotificationResponse struct {
	PID     uint32
	Channel string
	Payload string
}

// ParseNotificationResponse decodes the body of a NotificationResponse.
func ParseNotificationResponse(body []byte) (NotificationResponse, error) {
	c := cursor{b: body, msg: "NotificationResponse"}
	pid := c.u32()
	ch := c.cstring()
	pl := c.cstring()
	if err := c.done(); err != nil {
		return NotificationResponse{}, err
	}
	return NotificationResponse{PID: pid, Channel: string(ch), Payload: string(pl)}, nil
}

// AppendNotificationResponse appends a NotificationResponse message (sent by
// servers).
func AppendNotificationResponse(dst []byte, n NotificationResponse) ([]byte, error) {
	orig := len(dst)
	dst, start := BeginMessage(dst, MsgNotificationResponse)
	dst = AppendUint32(dst, n.PID)
	dst, err := AppendCString(dst, n.Channel)
	if err == nil {
		dst, err = AppendCString(dst, n.Payload)
	}
	if err != nil {
		return dst[:orig], err
	}
	return FinishMessage(dst, start)
}
