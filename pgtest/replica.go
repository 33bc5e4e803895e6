package pgtest

import (
	"fmt"
	"strconv"
	"strings"
)

// HostsDSN returns a key=value DSN listing servers as hosts, in order,
// over TCP ("host=127.0.0.1,127.0.0.1 port=N,M user=postgres
// dbname=postgres sslmode=disable"), followed by the extra key=value
// pairs: a primary and its standbys for a multi-host client. User and
// database are those of the first server.
func HostsDSN(servers []*Server, extra ...string) string {
	if len(servers) == 0 {
		return strings.Join(extra, " ")
	}
	hosts := make([]string, len(servers))
	ports := make([]string, len(servers))
	for i, s := range servers {
		hosts[i], ports[i] = s.Host, strconv.Itoa(s.Port)
	}
	return strings.Join(append([]string{
		"host=" + strings.Join(hosts, ","),
		"port=" + strings.Join(ports, ","),
		"user=" + servers[0].User, "dbname=" + servers[0].Database, "sslmode=disable",
	}, extra...), " ")
}

// PauseReplay pauses WAL replay on a standby (pg_wal_replay_pause()) and
// returns once it is paused: the standby goes on receiving WAL from its
// primary, but its data stays as it is until ResumeReplay. It fails on a
// server that is not in recovery.
func (s *Server) PauseReplay() error {
	if err := s.Exec("SELECT pg_wal_replay_pause()"); err != nil {
		return err
	}
	if s.version >= 140000 {
		// pg_is_wal_replay_paused() says only that a pause was asked for.
		return s.waitQuery("SELECT pg_get_wal_replay_pause_state()", "paused", "replay paused")
	}
	return s.waitQuery("SELECT pg_is_wal_replay_paused()", "t", "replay paused")
}

// ResumeReplay resumes WAL replay on a standby paused by PauseReplay.
func (s *Server) ResumeReplay() error {
	return s.Exec("SELECT pg_wal_replay_resume()")
}

// Follow points a standby's WAL receiver at up, a standby of the same
// primary that was promoted (or any server of the same cluster history),
// and returns once the standby streams from it. The standby follows up's
// timeline (recovery_target_timeline is latest): it must not have
// replayed WAL of its former primary that up never received, which a
// "fast" Shutdown of that primary ensures. The standby stays counted
// among its former primary's standbys until it is stopped. Follow needs
// PostgreSQL 13 or later (primary_conninfo changed without a restart).
func (s *Server) Follow(up *Server) error {
	if s.version < 130000 {
		return fmt.Errorf("pgtest: Follow needs PostgreSQL 13 or later, the server is %d", s.version)
	}
	s.mu.Lock()
	err := s.checkOwn("Follow")
	name := s.appName
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if name == "" {
		return fmt.Errorf("pgtest: Follow: the server is not a standby made by StartStandby")
	}
	conninfo := "host=" + up.Host + " port=" + strconv.Itoa(up.Port) + " user=" + up.User +
		" application_name=" + name + " sslmode=disable"
	if err := s.Exec("ALTER SYSTEM SET primary_conninfo = " + quoteLiteral(conninfo) + ";\nSELECT pg_reload_conf();"); err != nil {
		return err
	}
	return s.waitQuery("SELECT status || ' ' || sender_port FROM pg_stat_wal_receiver",
		"streaming "+strconv.Itoa(up.Port), "standby "+name+" streaming from port "+strconv.Itoa(up.Port))
}
