package wire

// BackendKeyData ('K') carries the key a client needs to cancel queries on its
// connection.
//
//	int32 process ID, int32 secret key
type BackendKeyData struct {
	ProcessID uint32
	SecretKey uint32
}

// ParseBackendKeyData decodes the body of a BackendKeyData message.
func ParseBackendKeyData(body []byte) (BackendKeyData, error) {
	c := cursor{b: body, msg: "BackendKeyData"}
	k := BackendKeyData{ProcessID: c.u32(), SecretKey: c.u32()}
	if err := c.done(); err != nil {
		return BackendKeyData{}, err
	}
	return k, nil
}

// AppendBackendKeyData appends a BackendKeyData message (sent by servers).
func AppendBackendKeyData(dst []byte, k BackendKeyData) []byte {
	dst = append(dst, MsgBackendKeyData, 0, 0, 0, 12)
	dst = AppendUint32(dst, k.ProcessID)
	return AppendUint32(dst, k.SecretKey)
}
