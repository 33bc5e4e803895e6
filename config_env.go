package pgline

import "github.com/pgline/pgline/internal/dsn"

// configSource is what ParseConfig reads besides the DSN: the environment,
// the operating-system user and the directories searched for a server
// socket (package dsn reads them). Tests replace it to stay independent of
// the machine.
type configSource struct {
	dsn.Source
}

// osConfigSource reads the process environment and the real user.
func osConfigSource() *configSource {
	return &configSource{Source: *dsn.System()}
}

// applyEnv fills every key the DSN (or the service file) left unset from
// its PG* environment variable. A key set in the DSN, even to "", is not
// looked up; an empty variable is the same as an unset one.
func applyEnv(s settings, src *configSource) {
	for key, name := range dsn.EnvVars() {
		if _, ok := s[key]; ok {
			continue
		}
		if v := src.Env(name); v != "" {
			s[key] = setting{value: v, origin: name}
		}
	}
}

// defaultSSLFile returns name in the per-user libpq directory
// (~/.postgresql) if that file exists, else "".
func (src *configSource) defaultSSLFile(name string) string {
	return src.UserFile(name)
}
