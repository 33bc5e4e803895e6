package pgline

import (
	"fmt"
	"log/slog"
	"strings"
)

// redactedSecret replaces a secret when a Config is printed or logged.
const redactedSecret = "[redacted]"

func redact(s string) string {
	if s == "" {
		return ""
	}
	return redactedSecret
}

// Format prints the Config as fmt does for any struct (every verb and
// flag), with its secrets replaced by "[redacted]": Password, SSLPassword
// and each host's password-file password. A Config is what a program logs
// when a connection fails.
func (c Config) Format(f fmt.State, verb rune) {
	type config Config // without methods: no recursion
	r := config(c)
	r.Password, r.SSLPassword = redact(c.Password), redact(c.SSLPassword)
	r.Hosts = make([]HostConfig, len(c.Hosts))
	for i, h := range c.Hosts {
		h.Password = redact(h.Password)
		r.Hosts[i] = h
	}
	s := fmt.Sprintf(fmt.FormatString(f, verb), r)
	if verb == 'v' && f.Flag('#') {
		s = strings.Replace(s, "pgline.config{", "pgline.Config{", 1)
	}
	fmt.Fprint(f, s)
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
	s := fmt.Sprintf(fmt.FormatString(f, verb), r)
	if verb == 'v' && f.Flag('#') {
		s = strings.Replace(s, "pgline.hostConfig{", "pgline.HostConfig{", 1)
	}
	fmt.Fprint(f, s)
}

// LogValue is the HostConfig as slog logs it (see Format).
func (h HostConfig) LogValue() slog.Value { return slog.StringValue(fmt.Sprintf("%+v", h)) }
