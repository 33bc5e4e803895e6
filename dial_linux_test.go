package pgline

import (
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// sockOpts reads the keepalive and user-timeout options of c's socket.
func sockOpts(t *testing.T, c *Conn) (keepalive, idle, interval, count, userTimeout int) {
	t.Helper()
	tc, ok := c.s.NetConn.(*net.TCPConn)
	if !ok {
		t.Fatalf("the connection's socket is a %T, want TCP", c.s.NetConn)
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var errs []error
	get := func(fd uintptr, level, opt int) int {
		v, err := syscall.GetsockoptInt(int(fd), level, opt)
		errs = append(errs, err)
		return v
	}
	rc.Control(func(fd uintptr) {
		keepalive = get(fd, syscall.SOL_SOCKET, syscall.SO_KEEPALIVE)
		idle = get(fd, syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE)
		interval = get(fd, syscall.IPPROTO_TCP, syscall.TCP_KEEPINTVL)
		count = get(fd, syscall.IPPROTO_TCP, syscall.TCP_KEEPCNT)
		userTimeout = get(fd, syscall.IPPROTO_TCP, tcpUserTimeout)
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return
}

// sysctlInt reads an integer under /proc/sys.
func sysctlInt(t *testing.T, name string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/" + name)
	if err != nil {
		t.Skipf("cannot read the system's value: %v", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestKeepalivesOnTheSocket: a connection's socket has pgline's keepalive
// defaults when no key is set, the DSN's keepalives_* and
// tcp_user_timeout when set (libpq's units: seconds, milliseconds), the
// system's values for a 0, and no keepalives with keepalives=0.
func TestKeepalivesOnTheSocket(t *testing.T) {
	t.Parallel() // connections of its own; nothing timed
	type opts struct{ keepalive, idle, interval, count, userTimeout int }
	sysIdle := sysctlInt(t, "net/ipv4/tcp_keepalive_time")
	sysIntvl := sysctlInt(t, "net/ipv4/tcp_keepalive_intvl")
	sysCount := sysctlInt(t, "net/ipv4/tcp_keepalive_probes")
	for _, tc := range []struct {
		name, dsn string
		want      opts
	}{
		{"defaults", "", opts{1, 15, 5, 3, 0}},
		{"keys", "keepalives=1 keepalives_idle=7 keepalives_interval=2 keepalives_count=4 tcp_user_timeout=2500", opts{1, 7, 2, 4, 2500}},
		{"zero is the system's", "keepalives_idle=0 keepalives_interval=0 keepalives_count=0 tcp_user_timeout=0", opts{1, sysIdle, sysIntvl, sysCount, 0}},
		{"off", "keepalives=0", opts{0, -1, -1, -1, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := connect(t, srv.DSN(tc.dsn))
			var got opts
			got.keepalive, got.idle, got.interval, got.count, got.userTimeout = sockOpts(t, c)
			if tc.want.idle == -1 { // keepalives off: the other values do not matter
				got.idle, got.interval, got.count = -1, -1, -1
			}
			if got != tc.want {
				t.Fatalf("socket options %+v, want %+v", got, tc.want)
			}
		})
	}
}
