package pgline

import (
	"fmt"
	"log/slog"
	"strings"
)

// redact replaces a secret when a Config is printed or logged.
func redact(s string) string {
	if s == "" {
		return ""
	}
	return "[redacted]"
}

// Format prints the Config as fmt does for any struct (every verb and
// flag), with its secrets replaced by "[redacted]": Password, SSLPassword
// and, through HostConfig's Format, each host's password-file password. A
// Config is what a program logs when a connection fails.
func (c Config) Format(f fmt.State, verb rune) {
	type config Config // without methods: no recursion
	r := config(c)
	r.Password, r.SSLPassword = redact(c.Password), redact(c.SSLPassword)
	formatAs(f, verb, r, "pgline.config{", "pgline.Config{")
}

// LogValue is the Config as slog logs it: formatted with %+v, secrets
// redacted (see Format).
func (c Config) LogValue() slog.Value { return slog.StringValue(fmt.Sprintf("%+v", c)) }

// Format prints the HostConfig as fmt does for any struct, with its
// password-file password replaced by "[redacted]".
func (h HostConfig) Format(f fmt.State, verb rune) {
	type hostConfig HostConfig
	r := hostConfig(h)
	r.Password = redact(h.Password)
	formatAs(f, verb, r, "pgline.hostConfig{", "pgline.HostConfig{")
}

// LogValue is the HostConfig as slog logs it (see Format).
func (h HostConfig) LogValue() slog.Value { return slog.StringValue(fmt.Sprintf("%+v", h)) }

// formatAs prints v, a redacted copy of a Config or HostConfig as a type
// without methods, with f's verb and flags; %#v names the original type
// (to) instead of the copy's (from).
func formatAs(f fmt.State, verb rune, v any, from, to string) {
	s := fmt.Sprintf(fmt.FormatString(f, verb), v)
	if verb == 'v' && f.Flag('#') {
		s = strings.Replace(s, from, to, 1)
	}
	fmt.Fprint(f, s)
}
