package pgline

import (
	"context"
	"net"
	"strconv"
	"syscall"
	"time"
)

// pgline's TCP keepalive defaults (see Config.KeepalivesIdle): a peer gone
// silent is found within DefaultKeepalivesIdle + DefaultKeepalivesCount
// × DefaultKeepalivesInterval, 30 seconds.
const (
	DefaultKeepalivesIdle     = 15 * time.Second
	DefaultKeepalivesInterval = 5 * time.Second
	DefaultKeepalivesCount    = 3
)

// dialHost opens the socket to h: its Unix socket when Host is a directory,
// otherwise TCP to HostAddr or Host (every resolved address is tried), with
// the Config's keepalives and user timeout.
func dialHost(ctx context.Context, cfg *Config, h HostConfig) (net.Conn, error) {
	port := strconv.Itoa(int(h.Port))
	if h.IsUnixSocket() {
		var d net.Dialer
		return d.DialContext(ctx, "unix", h.Host+"/.s.PGSQL."+port)
	}
	addr := h.Host
	if h.HostAddr != "" {
		addr = h.HostAddr
	}
	if addr == "" {
		addr = "localhost"
	}
	d := net.Dialer{KeepAliveConfig: keepAliveConfig(cfg), KeepAlive: -1}
	if cfg.NoKeepalives {
		d.KeepAliveConfig = net.KeepAliveConfig{}
	}
	if t := cfg.TCPUserTimeout; t > 0 {
		d.Control = func(network, address string, rc syscall.RawConn) error {
			return setUserTimeout(rc, t)
		}
	}
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(addr, port))
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	return c, nil
}

// keepAliveConfig is the Config's keepalives as the net package takes
// them: pgline's defaults for zero fields, the system's (-1) for negative
// ones.
func keepAliveConfig(cfg *Config) net.KeepAliveConfig {
	kc := net.KeepAliveConfig{Enable: true, Idle: cfg.KeepalivesIdle, Interval: cfg.KeepalivesInterval, Count: cfg.KeepalivesCount}
	switch {
	case kc.Idle == 0:
		kc.Idle = DefaultKeepalivesIdle
	case kc.Idle < 0:
		kc.Idle = -1
	}
	switch {
	case kc.Interval == 0:
		kc.Interval = DefaultKeepalivesInterval
	case kc.Interval < 0:
		kc.Interval = -1
	}
	switch {
	case kc.Count == 0:
		kc.Count = DefaultKeepalivesCount
	case kc.Count < 0:
		kc.Count = -1
	}
	return kc
}

// deadPeerAfter is how long a connection with requests in flight waits
// for the server to acknowledge anything it sent before it fails (see
// Config.KeepalivesIdle): the keepalives' bound, idle + interval × count,
// as pgline's defaults or the Config's set them. It is zero (no such
// bound) with keepalives off or left to the system, and with a
// TCPUserTimeout, which bounds unacknowledged data itself.
func deadPeerAfter(cfg *Config) time.Duration {
	kc := keepAliveConfig(cfg)
	if cfg.NoKeepalives || cfg.TCPUserTimeout > 0 || kc.Idle < 0 || kc.Interval < 0 || kc.Count < 0 {
		return 0
	}
	return kc.Idle + time.Duration(kc.Count)*kc.Interval
}
