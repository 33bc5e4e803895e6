package auth

import (
	"errors"
	"strings"
	"testing"
)

const hostilePassword = "hunter2-S3CRET-pw"

// readyForServerFirst returns an exchange with the RFC 7677 client nonce
// that has sent its client-first-message.
func readyForServerFirst(t testing.TB) *SCRAM {
	t.Helper()
	c, err := newSCRAM(MechSCRAMSHA256, hostilePassword, nil, false, "", rfcNonce)
	if err != nil {
		t.Fatal(err)
	}
	c.maxIterations = 10_000 // keep the accepted-but-large cases fast
	c.ClientFirst()
	return c
}

func TestServerFirstHostile(t *testing.T) {
	const n = "r=" + rfcNonce + "SRV"
	const s = ",s=QSXCR+Q6sek8bf92"
	tests := []struct {
		name, msg, want string
	}{
		{"empty", "", "empty"},
		{"missing r", "s=QSXCR+Q6sek8bf92,i=4096", `expected nonce attribute "r="`},
		{"missing s", n + ",i=4096", `expected salt attribute "s="`},
		{"missing i", n + s, `missing iteration count attribute "i="`},
		{"only nonce", n, `missing salt attribute "s="`},
		{"wrong order s r i", "s=QSXCR+Q6sek8bf92," + n + ",i=4096", `expected nonce attribute`},
		{"wrong order r i s", n + ",i=4096" + s, `expected salt attribute`},
		{"mandatory extension", "m=ext," + n + s + ",i=4096", "mandatory extension"},
		{"trailing extension", n + s + ",i=4096,x=1", "unexpected data after the iteration count"},
		{"trailing comma", n + s + ",i=4096,", "unexpected data after the iteration count"},
		{"empty nonce", "r=" + s + ",i=4096", "empty nonce"},
		{"nonce not extending client nonce", "r=XXXX" + rfcNonce + s + ",i=4096", "does not start with the client nonce"},
		{"nonce prefix of client nonce", "r=" + rfcNonce[:5] + s + ",i=4096", "does not start with the client nonce"},
		{"nonce without server part", "r=" + rfcNonce + s + ",i=4096", "adds nothing"},
		{"space in nonce", "r=" + rfcNonce + "a b" + s + ",i=4096", "not printable"},
		{"control byte in nonce", "r=" + rfcNonce + "a\x01" + s + ",i=4096", "not printable"},
		{"high byte in nonce", "r=" + rfcNonce + "\xc3\xa9" + s + ",i=4096", "not printable"},
		{"newline in salt", n + ",s=QSXC\nR+Q6sek8bf92,i=4096", "not printable"},
		{"bad base64 salt", n + ",s=!!!!,i=4096", "salt is not valid base64"},
		{"truncated base64 salt", n + ",s=QSX,i=4096", "salt is not valid base64"},
		{"empty salt", n + ",s=,i=4096", "empty salt"},
		{"i=0", n + s + ",i=0", "at least 1"},
		{"i negative", n + s + ",i=-1", "not a positive decimal"},
		{"i plus sign", n + s + ",i=+4096", "not a positive decimal"},
		{"i non-numeric", n + s + ",i=abc", "not a positive decimal"},
		{"i hex", n + s + ",i=0x10", "not a positive decimal"},
		{"i empty", n + s + ",i=", "empty iteration count"},
		{"i leading zero", n + s + ",i=04096", "leading zero"},
		{"i above MaxIterations", n + s + ",i=1000001", "outside [1, 1000000]"},
		{"i overflow", n + s + ",i=99999999999999999999999", "exceeds the limit"},
		{"i above this exchange's limit", n + s + ",i=10001", "exceeds the limit 10000"},
		{"attribute without =", "r" + rfcNonce + s + ",i=4096", `expected nonce attribute`},
		{"uppercase attribute", "R=" + rfcNonce + "x" + s + ",i=4096", `expected nonce attribute`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := readyForServerFirst(t)
			out, err := c.ServerFirst([]byte(tt.msg))
			if err == nil {
				t.Fatalf("ServerFirst(%q) = %q, want an error", tt.msg, out)
			}
			if !errors.Is(err, ErrMalformedMessage) {
				t.Errorf("err = %v, want it to wrap ErrMalformedMessage", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q, want it to contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), hostilePassword) {
				t.Errorf("err %q contains the password", err)
			}
			if out != nil {
				t.Errorf("client-final %q returned with an error", out)
			}
		})
	}
}

func TestServerFinalHostile(t *testing.T) {
	tests := []struct {
		name, msg string
		target    error // errors.Is target; nil means *ServerError
		want      string
	}{
		{"empty", "", ErrMalformedMessage, "empty"},
		{"missing v", "x=abcd", ErrMalformedMessage, `expected verifier attribute "v="`},
		{"v without =", "vabcd", ErrMalformedMessage, `expected verifier attribute`},
		{"empty v", "v=", ErrMalformedMessage, "empty verifier"},
		{"bad base64", "v=!!!!", ErrMalformedMessage, "not valid base64"},
		{"short signature", "v=AAAA", ErrMalformedMessage, "verifier is 3 bytes, want 32"},
		{"long signature", "v=" + strings.Repeat("A", 48), ErrMalformedMessage, "verifier is 36 bytes"},
		{"wrong signature", "v=" + strings.Repeat("A", 43) + "=", ErrServerSignature, "signature mismatch"},
		{"trailing extension", rfcServerFinal + ",x=1", ErrMalformedMessage, "unexpected data after the verifier"},
		{"control byte", "v=\x00", ErrMalformedMessage, "not printable"},
		{"server error", "e=invalid-proof", nil, "auth: SCRAM server error: invalid-proof"},
		{"server error with extension", "e=other-error,x=1", nil, "server error: other-error"},
		{"server error with control bytes", "e=bad\x1b[31m", nil, `"bad\x1b[31m"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := newSCRAM(MechSCRAMSHA256, "pencil", nil, false, "user", rfcNonce)
			if err != nil {
				t.Fatal(err)
			}
			c.ClientFirst()
			if _, err := c.ServerFirst([]byte(rfcServerFirst)); err != nil {
				t.Fatal(err)
			}
			err = c.ServerFinal([]byte(tt.msg))
			if err == nil {
				t.Fatalf("ServerFinal(%q): no error", tt.msg)
			}
			if tt.target != nil && !errors.Is(err, tt.target) {
				t.Errorf("err = %v, want errors.Is %v", err, tt.target)
			}
			if tt.target == nil {
				var se *ServerError
				if !errors.As(err, &se) {
					t.Errorf("err = %#v, want *ServerError", err)
				}
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q, want it to contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "pencil") {
				t.Errorf("err %q contains the password", err)
			}
			// The exchange is dead: even the right answer is refused now.
			if err := c.ServerFinal([]byte(rfcServerFinal)); !errors.Is(err, ErrOutOfOrder) {
				t.Errorf("ServerFinal after failure: %v, want ErrOutOfOrder", err)
			}
		})
	}
}
