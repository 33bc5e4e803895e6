package pgline

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// A dead network is tested for real: a test calls inOwnNetns, which runs
// it again, alone, in a process in a network namespace of its own
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
	t.Parallel() // a process and clusters of its own; it mostly waits
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
// silently (see above), until healNetwork.
func cutNetwork(t *testing.T) {
	t.Helper()
	tcQdisc(t, "add")
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
