package pgline

import (
	"sort"

	"github.com/pgline/pgline/internal/session"
)

// startup runs the session's startup (Session.Startup) with what the
// Config and the host give it.
func (c *Conn) startup(h HostConfig) error {
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
