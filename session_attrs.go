package pgline

import (
	"context"
	"fmt"
)

// sessionAttrsError reports a server that does not match
// target_session_attrs; the next host is tried.
type sessionAttrsError struct {
	want string
	why  string
}

func (e *sessionAttrsError) Error() string {
	return "server does not match target_session_attrs=" + e.want + ": " + e.why
}

// checkSessionAttrs checks the new session against target_session_attrs,
// as libpq does: from the in_hot_standby and default_transaction_read_only
// parameters when the server reports them (PostgreSQL 14+), otherwise by
// asking (SHOW transaction_read_only, SELECT pg_is_in_recovery()).
func (c *Conn) checkSessionAttrs(ctx context.Context, want string) error {
	switch want {
	case "", "any":
		return nil
	case "read-write", "read-only":
		ro, err := c.readOnlySession(ctx)
		if err != nil {
			return err
		}
		if ro != (want == "read-only") {
			why := "session is read-only"
			if !ro {
				why = "session is read-write"
			}
			return &sessionAttrsError{want, why}
		}
	case "primary", "standby":
		standby, err := c.inHotStandby(ctx)
		if err != nil {
			return err
		}
		if standby != (want == "standby") {
			why := "server is in hot standby mode"
			if !standby {
				why = "server is not in hot standby mode"
			}
			return &sessionAttrsError{want, why}
		}
	default:
		return fmt.Errorf("invalid target_session_attrs %q", want)
	}
	return nil
}

// readOnlySession reports whether transactions of this session are
// read-only by default (a hot standby, or default_transaction_read_only).
func (c *Conn) readOnlySession(ctx context.Context) (bool, error) {
	hs, dro := c.ParameterStatus("in_hot_standby"), c.ParameterStatus("default_transaction_read_only")
	if hs != "" && dro != "" {
		return hs == "on" || dro == "on", nil
	}
	v, err := c.queryScalar(ctx, "SHOW transaction_read_only")
	return v == "on", err
}

// inHotStandby reports whether the server is a standby in recovery.
func (c *Conn) inHotStandby(ctx context.Context) (bool, error) {
	if hs := c.ParameterStatus("in_hot_standby"); hs != "" {
		return hs == "on", nil
	}
	v, err := c.queryScalar(ctx, "SELECT pg_catalog.pg_is_in_recovery()")
	return v == "t", err
}
