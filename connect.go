package pgline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pgline/pgline/internal/config"
	"github.com/pgline/pgline/internal/session"
	"github.com/pgline/pgline/internal/wire"
)

// Connect opens a connection described by dsn (URL or key=value form; the
// libpq PG* environment variables fill in what it leaves out).
func Connect(ctx context.Context, dsn string) (*Conn, error) {
	cfg, err := ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	return ConnectConfig(ctx, cfg)
}

// ConnectConfig opens a connection described by cfg. Hosts are tried in
// order (shuffled when LoadBalanceHosts is "random"); the first that accepts
// the connection, authenticates and matches TargetSessionAttrs is kept. When
// every host fails the error is a *ConnectError naming each host and why.
func ConnectConfig(ctx context.Context, cfg *Config) (*Conn, error) {
	if len(cfg.Hosts) == 0 {
		return nil, errors.New("pgline: config has no host")
	}
	tctx, ev := traceStart(ctx, cfg, TraceEvent{Kind: TraceConnect, Host: hostLabel(cfg.Hosts[0]), Database: cfg.Database})
	// tctx: what the connection runs while connecting (AfterConnect's
	// statements, the pooler check) is traced under the connect.
	c, err := connectHooked(tctx, cfg)
	if ev != nil && c != nil {
		ev.setConn(c)
	}
	traceEnd(tctx, cfg, ev, CommandTag{}, err)
	return c, err
}

// connectHooked is connectHosts between cfg's BeforeConnect and
// AfterConnect.
func connectHooked(ctx context.Context, cfg *Config) (*Conn, error) {
	if cfg.BeforeConnect != nil {
		cc := *cfg
		cc.Hosts = append([]HostConfig(nil), cfg.Hosts...)
		cc.RuntimeParams = maps.Clone(cfg.RuntimeParams)
		if err := cfg.BeforeConnect(ctx, &cc); err != nil {
			return nil, fmt.Errorf("pgline: BeforeConnect: %w", err)
		}
		if len(cc.Hosts) == 0 {
			return nil, errors.New("pgline: BeforeConnect left no host")
		}
		cfg = &cc
	}
	c, err := connectHosts(ctx, cfg)
	if err != nil || cfg.AfterConnect == nil {
		return c, err
	}
	if err := cfg.AfterConnect(ctx, c); err != nil {
		c.Close()
		return nil, fmt.Errorf("pgline: AfterConnect: %w", err)
	}
	return c, nil
}

// connectHosts tries the hosts of cfg (see ConnectConfig). A Config made
// without ParseConfig is held to ParseConfig's rule on sslnegotiation.
func connectHosts(ctx context.Context, cfg *Config) (*Conn, error) {
	if why := config.CheckSSLNegotiation(cfg.SSLNegotiation, cfg.SSLMode); why != "" {
		return nil, errors.New("pgline: sslnegotiation: " + why)
	}
	proto, err := protocolRange(cfg)
	if err != nil {
		return nil, err
	}
	hosts := cfg.Hosts
	if cfg.LoadBalanceHosts == "random" {
		hosts = append([]HostConfig(nil), hosts...)
		rand.Shuffle(len(hosts), func(i, j int) { hosts[i], hosts[j] = hosts[j], hosts[i] })
	}

	var cerr ConnectError
	attrs := cfg.TargetSessionAttrs
	// prefer-standby: a first pass looks for a standby, a second takes any.
	passes := []string{attrs}
	if attrs == "prefer-standby" {
		passes = []string{"standby", "any"}
	}
	for _, want := range passes {
		for _, h := range hosts {
			c, err := connectHost(ctx, cfg, h, want, proto)
			if err == nil {
				return c, nil
			}
			ended := ctxEnded(ctx)
			if ended != nil && !errors.Is(err, ended) {
				// A dial or read that timed out at ctx's deadline says
				// "i/o timeout": the error says the ctx ended too.
				err = fmt.Errorf("%w: %w", ended, err)
			}
			cerr.Attempts = append(cerr.Attempts, HostError{Host: hostLabel(h), Err: err})
			if ended != nil || refusedByServer(err) {
				return nil, &cerr
			}
		}
	}
	return nil, &cerr
}

// ctxEnded returns ctx's error, or context.DeadlineExceeded once its
// deadline has passed (a timer may not have ended it yet), or nil.
func ctxEnded(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}

// refusedByServer reports whether a host's server refused the session
// with an error (a failed authentication, an unknown database): as in
// libpq, the other hosts are then not tried, so that a wrong password does
// not land on another server, nor fail once per host. The server's
// "cannot connect now" (57P03, starting up or shutting down) moves on,
// and so does a refusal of the protocol version: another host may be
// newer.
func refusedByServer(err error) bool {
	var pgErr *PgError
	var pv *session.ProtocolVersionError
	return errors.As(err, &pgErr) && pgErr.Code != "57P03" && !errors.As(err, &pv)
}

// protoRange is the range of protocol versions a connect allows
// (major<<16 | minor): its StartupMessage asks max.
type protoRange struct{ min, max uint32 }

// protocolRange is the range cfg's MinProtocolVersion and
// MaxProtocolVersion allow, by libpq's rules (config.ProtocolRange), or an
// error naming the field at fault.
func protocolRange(cfg *Config) (protoRange, error) {
	lo, hi, bad := config.ProtocolRange(cfg.MinProtocolVersion, cfg.MaxProtocolVersion)
	switch bad {
	case "":
		return protoRange{lo, hi}, nil
	case "min_protocol_version":
		return protoRange{}, fmt.Errorf("pgline: invalid Config.MinProtocolVersion %q: must be one of %s",
			cfg.MinProtocolVersion, strings.Join(config.ProtocolVersionNames, ", "))
	}
	return protoRange{}, fmt.Errorf("pgline: invalid Config.MaxProtocolVersion %q: must be one of %s, not below MinProtocolVersion %q",
		cfg.MaxProtocolVersion, strings.Join(config.ProtocolVersionNames, ", "), cfg.MinProtocolVersion)
}

// hostLabel names a host in errors: "host:port", "[::1]:port" or the socket
// path.
func hostLabel(h HostConfig) string {
	port := strconv.Itoa(int(h.Port))
	if h.IsUnixSocket() {
		return h.Host + "/.s.PGSQL." + port
	}
	name := h.Host
	if h.HostAddr != "" {
		name = h.Host + " (" + h.HostAddr + ")"
		if h.Host == "" {
			name = h.HostAddr
		}
	}
	return net.JoinHostPort(name, port)
}

// connectHost makes the attempts for one host: one per TLS plan of the
// sslmode (prefer: TLS, then plaintext; allow: plaintext, then TLS), each
// bounded by ConnectTimeout. The error of the last attempt is returned.
// An attempt whose StartupMessage the server refused for its protocol
// version (ProtocolVersionError.Refused: a pooler that does not negotiate
// minor versions) is made again at once asking 3.0, and so are the next.
func connectHost(ctx context.Context, cfg *Config, h HostConfig, attrs string, proto protoRange) (*Conn, error) {
	var errs []error
	for _, plan := range tlsAttempts(cfg, h) {
		c, err := connectAttempt(ctx, cfg, h, plan, attrs, proto)
		var pv *session.ProtocolVersionError
		if errors.As(err, &pv) && pv.Refused() && ctx.Err() == nil {
			proto.max = wire.ProtocolVersion30
			c, err = connectAttempt(ctx, cfg, h, plan, attrs, proto)
		}
		if err == nil {
			return c, nil
		}
		if len(errs) > 0 {
			err = &retryError{plan: plan, err: err}
		}
		errs = append(errs, err)
		if ctx.Err() != nil || !retryOtherTLSPlan(err) {
			break
		}
	}
	if len(errs) == 1 {
		return nil, errs[0]
	}
	return nil, joinedError(errs)
}

// plainStartupError is a startup that failed in plaintext although TLS was
// asked for (sslmode=prefer against a server without TLS).
type plainStartupError struct{ err error }

func (e *plainStartupError) Error() string { return e.err.Error() }
func (e *plainStartupError) Unwrap() error { return e.err }

// retryError is the failure of a host's second attempt, with or without
// TLS as the sslmode allows.
type retryError struct {
	plan tlsPlan
	err  error
}

func (e *retryError) Error() string {
	if e.plan == tlsNo {
		return "then without TLS: " + e.err.Error()
	}
	return "then with TLS: " + e.err.Error()
}

func (e *retryError) Unwrap() error { return e.err }

// joinedError is several errors of one host, shown on one line.
type joinedError []error

func (e joinedError) Error() string {
	s := make([]string, len(e))
	for i, err := range e {
		s[i] = err.Error()
	}
	return strings.Join(s, "; ")
}

func (e joinedError) Unwrap() []error { return e }

// errSSLRequestError is the failure of an attempt whose SSLRequest the
// server answered with an error (see negotiateTLS).
var errSSLRequestError = errors.New("server sent an error response to SSLRequest")

// retryOtherTLSPlan reports whether a failed attempt may be retried with
// the next TLS plan: not when the host is unreachable, timed out, or when
// the session was refused for its attributes, nor after an error answer
// to SSLRequest.
func retryOtherTLSPlan(err error) bool {
	var pe *plainStartupError
	if errors.As(err, &pe) || errors.Is(err, errSSLRequestError) {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		return false
	}
	var se *sessionAttrsError
	var pv *session.ProtocolVersionError
	return !errors.As(err, &se) && !errors.As(err, &pv)
}

// connectAttempt dials h once and runs the startup: TLS negotiation,
// StartupMessage (asking proto.max), authentication,
// ParameterStatus/BackendKeyData up to ReadyForQuery, then the
// target_session_attrs check.
func connectAttempt(ctx context.Context, cfg *Config, h HostConfig, plan tlsPlan, attrs string, proto protoRange) (*Conn, error) {
	if cfg.ConnectTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.ConnectTimeout)
		defer cancel()
	}
	netConn, err := dialHost(ctx, cfg, h)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			netConn.Close()
		}
	}()
	// Every read and write of the startup stops when ctx ends (its
	// deadline included: the socket deadline is set once ctx is done, so
	// that the error then reads as ctx's).
	stopWatch := context.AfterFunc(ctx, func() { netConn.SetDeadline(time.Unix(1, 0)) })
	defer stopWatch()

	c := &Conn{cfg: cfg, host: h, label: hostLabel(h)}
	opts := session.SessionOpts{
		CancelTimeout: cfg.CancelTimeout,
		CancelGrace:   cfg.CancelGrace,
		DialCancel:    func(ctx context.Context) (net.Conn, error) { return dialHost(ctx, cfg, h) },
		CancelTLS:     func(nc net.Conn) (net.Conn, error) { return cancelTLS(nc, cfg, h.Host) },
		Types:         newTypeMap(cfg.TypeMap),
		CacheMode:     cfg.cacheMode,
		CacheCapacity: cfg.cacheCapacity,
		ShareSyncs:    !cfg.syncEach,
		DeadPeerAfter: deadPeerAfter(cfg),
	}
	if cfg.OnNotice != nil {
		opts.OnNotice = func(f wire.ErrorFields) { cfg.OnNotice((*Notice)(pgErrorFromFields(&f))) }
	}
	if cfg.Tracer != nil {
		opts.OnPooler = func(why string) {
			tctx, ev := c.traceStart(context.Background(), TraceEvent{Kind: TracePooler, Reason: why})
			traceEnd(tctx, cfg, ev, CommandTag{}, nil)
		}
	}
	if cfg.proxies != nil {
		opts.Proxied = cfg.proxies.Flag(hostLabel(h))
	}
	c.s.Init(netConn, opts)
	if plan != tlsNo {
		if err := c.startTLS(plan); err != nil {
			return nil, ctxWrap(ctx, err)
		}
	}
	c.s.StartReading(cfg.ReadBufferSize, cfg.MaxMessageSize)
	if err := c.startup(h, proto); err != nil {
		err = ctxWrap(ctx, err)
		if plan == tlsTry && !c.s.TLS {
			// The server refused TLS: this was already the plaintext
			// attempt, which sslmode=prefer would otherwise repeat.
			err = &plainStartupError{err}
		}
		return nil, err
	}
	if !stopWatch() {
		// ctx ended as the startup finished: the deadline may be set.
		return nil, ctx.Err()
	}
	// From here on requests go through the session, which watches their
	// ctx itself.
	c.s.Started(netConn)
	ok = true
	if c.checksPooler() {
		// The pooler check (Session.StartPIDCheck): the session's first
		// request, before the checks of attrs.
		c.s.StartPIDCheck()
	}
	if err := c.checkSessionAttrs(ctx, attrs); err != nil {
		c.Close()
		return nil, ctxWrap(ctx, err)
	}
	return c, nil
}

// ctxWrap adds ctx's error to err when ctx has ended, so a timeout reads as
// one and errors.Is(err, context.DeadlineExceeded) holds.
func ctxWrap(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		return fmt.Errorf("%w (%w)", ctxErr, err)
	}
	return err
}

// startTLS makes the session's socket a TLS connection (negotiateTLS),
// or leaves it plain when plan allows and the server has no TLS.
func (c *Conn) startTLS(plan tlsPlan) error {
	conn, err := negotiateTLS(c.s.NetConn, c.cfg, c.host.Host, plan)
	if err != nil || conn == nil {
		return err
	}
	c.s.NetConn = conn
	c.s.TLS = true
	return nil
}

// checksPooler reports whether the connection tells a transaction
// pooler at connect: with statement_cache_mode=auto.
func (c *Conn) checksPooler() bool {
	return c.cfg.cacheMode == session.CacheAuto || c.cfg.cacheMode == ""
}

// startup runs the session's startup (Session.Startup) with what the
// Config and the host give it, within the protocol versions of proto.
func (c *Conn) startup(h HostConfig, proto protoRange) error {
	// Config.Password, when set (also after ParseConfig), wins over what
	// the password file gave for the host.
	pw := c.cfg.Password
	if pw == "" {
		pw = h.Password
	}
	return c.s.Startup(session.StartupConfig{
		Params:         startupParams(c.cfg),
		User:           c.cfg.User,
		Password:       pw,
		ChannelBinding: c.cfg.ChannelBinding,
		RequireAuth:    c.cfg.RequireAuth,
		CheckPID:       c.checksPooler() && !c.s.Proxied.Load(),
		MinProtocol:    proto.min,
		MaxProtocol:    proto.max,
	})
}

// startupParams lists the StartupMessage parameters: user, database,
// application_name, options, client_encoding (UTF8 unless the runtime
// parameters say otherwise) and every runtime parameter, in a stable order.
func startupParams(cfg *Config) []string {
	p := []string{"user", cfg.User}
	if cfg.Database != "" {
		p = append(p, "database", cfg.Database)
	}
	if cfg.ApplicationName != "" {
		p = append(p, "application_name", cfg.ApplicationName)
	}
	if cfg.Options != "" {
		p = append(p, "options", cfg.Options)
	}
	if _, ok := cfg.RuntimeParams["client_encoding"]; !ok {
		p = append(p, "client_encoding", "UTF8")
	}
	keys := make([]string, 0, len(cfg.RuntimeParams))
	for k := range cfg.RuntimeParams {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p = append(p, k, cfg.RuntimeParams[k])
	}
	return p
}
