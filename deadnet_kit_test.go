package pgline

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pgline/pgline/pgtest"
)

// A dead network is tested for real: a test calls inOwnNetns, which runs
// it again, alone (its subtests one after the other), in a process in a network namespace of its own
// (unshare -n: a loopback and nothing else), where TestMain starts the
// clusters on that loopback; there the test cuts the network with
// cutNetwork, which replaces the loopback's queue with one that drops
// every packet as if it had been sent (tc's blackhole qdisc: no RST, no
// ICMP, no local error, as in a partition, a host gone, or a NAT entry
// expired), and heals it with healNetwork. The machine's own network is
// never touched. It needs root, unshare and tc (iproute2); without them
// the test is skipped, except in CI, where that is a failure.

// netnsEnv names the test that the process runs in its own network
// namespace.
const netnsEnv = "PGLINE_NETNS_TEST"

// netnsSetUp brings the loopback up when the process is a test's own
// network namespace (see inOwnNetns), before the clusters start.
func netnsSetUp() error {
	if os.Getenv(netnsEnv) == "" {
		return nil
	}
	if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		return fmt.Errorf("bring the namespace's loopback up: %v: %s", err, out)
	}
	return nil
}

// inOwnNetns reports whether t runs in a network namespace of its own.
// When it does not, it runs t again in one (see above), reports that
// run's output and result as t's, and returns false: the caller returns.
func inOwnNetns(t *testing.T) bool {
	t.Helper()
	if os.Getenv(netnsEnv) == t.Name() {
		return true
	}
	if os.Getenv(netnsEnv) != "" {
		t.Skip("another test's network namespace")
	}
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root")
	}
	for _, tool := range []string{"unshare", "ip", "tc"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) > 0 {
		msg := "a dead network is tested in a network namespace of the test's own, which needs " +
			strings.Join(missing, ", ") + " (apt-get install util-linux iproute2; run as root)"
		if os.Getenv("CI") == "" {
			t.Skip(msg)
		}
		t.Fatal(msg + " (CI is set)")
	}
	// Not in parallel: its clusters' start and its load would take the
	// processors from tests that time their deadlines, and its own
	// bounds are timed too.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "-n", os.Args[0],
		"-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v", "-test.timeout=3m")
	cmd.Env = append(os.Environ(), netnsEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	t.Logf("run in a network namespace of its own:\n%s", out)
	if err != nil {
		t.Fatalf("the run in its own network namespace: %v", err)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatal("the run in its own network namespace did not pass the test")
	}
	return false
}

// cutNetwork drops every packet on the namespace's loopback from now on,
// silently (see above), until healNetwork or the test's end.
func cutNetwork(t *testing.T) {
	t.Helper()
	tcQdisc(t, "add")
	t.Cleanup(func() { exec.Command("tc", "qdisc", "del", "dev", "lo", "root", "blackhole").Run() })
}

// healNetwork ends cutNetwork's cut.
func healNetwork(t *testing.T) {
	t.Helper()
	tcQdisc(t, "del")
}

func tcQdisc(t *testing.T, op string) {
	t.Helper()
	if out, err := exec.Command("tc", "qdisc", op, "dev", "lo", "root", "blackhole").CombinedOutput(); err != nil {
		t.Fatalf("tc qdisc %s blackhole: %v: %s", op, err, out)
	}
}

// netnsHost is a cluster in a network namespace of its own, inside the
// test's, reached over a veth pair (this side 10.77.0.1, the host's
// 10.77.0.2): cutHost and healHost cut that link alone, as a partition
// between the client and one host of several.
type netnsHost struct {
	ns   string // the namespace's name (ip netns)
	srv  *pgtest.Server
	addr string // the host's address, 10.77.0.2
}

// startNetnsHost makes the namespace and the veth pair, and starts a
// cluster listening on the pair's far end, stopped (and the namespace
// removed) when the test ends. It must run in the test's own namespace
// (inOwnNetns).
func startNetnsHost(t *testing.T) *netnsHost {
	t.Helper()
	h := &netnsHost{ns: fmt.Sprintf("pgline%d", os.Getpid()), addr: "10.77.0.2"}
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	run("ip", "netns", "add", h.ns)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", h.ns).Run() })
	run("ip", "link", "add", "pgl0", "type", "veth", "peer", "name", "pgl1", "netns", h.ns)
	run("ip", "addr", "add", "10.77.0.1/24", "dev", "pgl0")
	run("ip", "link", "set", "pgl0", "up")
	run("ip", "-n", h.ns, "addr", "add", h.addr+"/24", "dev", "pgl1")
	run("ip", "-n", h.ns, "link", "set", "pgl1", "up")
	run("ip", "-n", h.ns, "link", "set", "lo", "up")

	// The server is started from a thread that joined the namespace: a
	// process inherits its parent thread's namespace. The thread is
	// never given back (locked, its goroutine ends): it ends with it.
	type started struct {
		s   *pgtest.Server
		err error
	}
	ch := make(chan started, 1)
	go func() {
		runtime.LockOSThread()
		f, err := os.Open("/run/netns/" + h.ns)
		if err != nil {
			ch <- started{err: err}
			return
		}
		defer f.Close()
		nr, ok := setnsCall[runtime.GOARCH]
		if !ok {
			ch <- started{err: fmt.Errorf("setns: its system call number on %s is not known here", runtime.GOARCH)}
			return
		}
		if _, _, errno := syscall.RawSyscall(nr, f.Fd(), syscall.CLONE_NEWNET, 0); errno != 0 {
			ch <- started{err: fmt.Errorf("setns: %w", errno)}
			return
		}
		s, err := pgtest.Start(pgtest.Options{
			Settings: map[string]string{"listen_addresses": h.addr},
			HBA:      []string{"host all all 10.77.0.0/24 trust"},
		})
		ch <- started{s, err}
	}()
	st := <-ch
	if st.err != nil {
		t.Fatalf("start a cluster in namespace %s: %v", h.ns, st.err)
	}
	h.srv = st.s
	t.Cleanup(func() { h.srv.Stop() })
	return h
}

// setnsCall is setns(2)'s system call number (package syscall has none).
var setnsCall = map[string]uintptr{"amd64": 308, "arm64": 268, "riscv64": 268, "386": 346, "arm": 375, "ppc64le": 350, "s390x": 339}

// hostPort is the host's address and port, for a DSN.
func (h *netnsHost) hostPort() (string, int) { return h.addr, h.srv.Port }

// cutHost drops every packet between the test and the host, both ways,
// silently (tc's blackhole qdisc on both ends of the pair), until
// healHost.
func (h *netnsHost) cutHost(t *testing.T) { h.qdisc(t, "add") }

// healHost ends cutHost's cut.
func (h *netnsHost) healHost(t *testing.T) { h.qdisc(t, "del") }

func (h *netnsHost) qdisc(t *testing.T, op string) {
	t.Helper()
	for _, args := range [][]string{
		{"tc", "qdisc", op, "dev", "pgl0", "root", "blackhole"},
		{"tc", "-n", h.ns, "qdisc", op, "dev", "pgl1", "root", "blackhole"},
	} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
}
