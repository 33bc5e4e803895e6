package auth

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzServerFirst feeds arbitrary server-first-messages to an exchange. It
// must never panic; on success the client-final-message must carry the
// server's nonce and a proof.
func FuzzServerFirst(f *testing.F) {
	f.Add([]byte(rfcServerFirst))
	f.Add([]byte("r=" + rfcNonce + "x,s=QSXCR+Q6sek8bf92,i=1"))
	f.Add([]byte("m=x,r=" + rfcNonce + "x,s=QSXCR+Q6sek8bf92,i=1"))
	f.Add([]byte("r=" + rfcNonce + "x,s=,i=1"))
	f.Add([]byte("r=" + rfcNonce + ",s=QSXCR+Q6sek8bf92,i=0"))
	f.Add([]byte("r=" + rfcNonce + "x,s=QSXCR+Q6sek8bf92,i=99999999999"))
	f.Add([]byte(""))
	f.Add([]byte(",,,"))
	f.Fuzz(func(t *testing.T, msg []byte) {
		c, err := newSCRAM(MechSCRAMSHA256, "pencil", nil, false, "user", rfcNonce)
		if err != nil {
			t.Fatal(err)
		}
		c.maxIterations = 64 // keep each input cheap
		c.ClientFirst()
		out, err := c.ServerFirst(msg)
		if err != nil {
			if out != nil {
				t.Fatalf("output %q with error %v", out, err)
			}
			if !errors.Is(err, ErrMalformedMessage) {
				t.Fatalf("error %v does not wrap ErrMalformedMessage", err)
			}
			return
		}
		sf, perr := parseServerFirst(msg)
		if perr != nil {
			t.Fatalf("ServerFirst accepted %q, parseServerFirst: %v", msg, perr)
		}
		if !bytes.HasPrefix(out, []byte("c=biws,r="+sf.nonce+",p=")) {
			t.Fatalf("client-final %q does not match nonce %q", out, sf.nonce)
		}
		if err := c.ServerFinal([]byte("v=" + rfcServerFinal[2:])); err == nil && !bytes.Equal(msg, []byte(rfcServerFirst)) {
			t.Fatalf("RFC signature accepted for server-first %q", msg)
		}
	})
}

// FuzzServerFinal feeds arbitrary server-final-messages after the RFC 7677
// server-first-message. It must never panic, and must succeed only for the
// RFC's signature.
func FuzzServerFinal(f *testing.F) {
	f.Add([]byte(rfcServerFinal))
	f.Add([]byte(rfcMisprinted))
	f.Add([]byte("e=invalid-proof"))
	f.Add([]byte("v="))
	f.Add([]byte("v=AAAA,x=1"))
	f.Add([]byte(""))
	f.Add([]byte("e="))
	// One client exchange's ServerFirst result is reused: only ServerFinal
	// is under test, and PBKDF2 with 4096 iterations per input would be slow.
	base, err := newSCRAM(MechSCRAMSHA256, "pencil", nil, false, "user", rfcNonce)
	if err != nil {
		f.Fatal(err)
	}
	base.ClientFirst()
	if _, err := base.ServerFirst([]byte(rfcServerFirst)); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		c := *base // fresh copy in the client-final-sent state
		err := c.ServerFinal(msg)
		if err == nil {
			if string(msg) != rfcServerFinal {
				t.Fatalf("ServerFinal accepted %q", msg)
			}
			return
		}
		var se *ServerError
		if !errors.Is(err, ErrMalformedMessage) && !errors.Is(err, ErrServerSignature) && !errors.As(err, &se) {
			t.Fatalf("unexpected error type %T: %v", err, err)
		}
	})
}

// FuzzSASLprep checks that SASLprep never panics and that a success is
// valid UTF-8 and stable under a second application.
func FuzzSASLprep(f *testing.F) {
	for _, s := range []string{"pencil", "I\u00adX", "\u2168", "\u0627\u0031", "\u0627\u0031\u0628", "\xff", "\ufb01\u00a0", "caf\u0065\u0301"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, ok := saslprep(s)
		if !ok {
			if preparePassword(s) != s {
				t.Fatalf("failed SASLprep of %+q did not fall back to the raw password", s)
			}
			return
		}
		if preparePassword(s) != out {
			t.Fatalf("preparePassword disagrees with saslprep for %+q", s)
		}
		if isASCII(s) && out != s {
			t.Fatalf("ASCII %+q changed to %+q", s, out)
		}
	})
}
