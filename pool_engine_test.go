package pgline

// routedConns returns the Conns that statements are routed to on the
// Pool's hosts now, a snapshot in the hosts' order (the connections held
// by Acquire or Begin are not among them).
func (p *Pool) routedConns() []*Conn {
	var cs []*Conn
	for _, hp := range p.set.eng.Hosts() {
		for _, b := range hp.Backends() {
			cs = append(cs, asConn(b))
		}
	}
	return cs
}
