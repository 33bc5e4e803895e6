package auth_test

import (
	"fmt"

	"github.com/pgline/pgline/internal/auth"
)

func ExampleMD5Password() {
	// AuthenticationMD5Password carried the salt 01 02 fe ff.
	fmt.Println(auth.MD5Password("postgres", "secret", [4]byte{0x01, 0x02, 0xfe, 0xff}))
	// Output: md56c143a9fdb92d561bbca5c93456233c7
}

func ExampleChooseMechanism() {
	// AuthenticationSASL over TLS offered both mechanisms.
	offered := []string{"SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"}

	mech, err := auth.ChooseMechanism(offered, "prefer", true)
	fmt.Println(mech, err)

	mech, err = auth.ChooseMechanism(offered, "disable", true)
	fmt.Println(mech, err, auth.ClientSupportsCB(offered, "disable", true))

	_, err = auth.ChooseMechanism([]string{"SCRAM-SHA-256"}, "require", true)
	fmt.Println(err != nil)
	// Output:
	// SCRAM-SHA-256-PLUS <nil>
	// SCRAM-SHA-256 <nil> false
	// true
}

func ExampleSCRAM() {
	scram, err := auth.NewSCRAM(auth.MechSCRAMSHA256, "secret", nil, false)
	if err != nil {
		panic(err)
	}
	first := scram.ClientFirst() // send in SASLInitialResponse with scram.Mechanism()
	fmt.Printf("%s %s\n", scram.Mechanism(), first[:8])

	// A server that answers with a nonce that is not ours is refused.
	_, err = scram.ServerFirst([]byte("r=someone-else,s=QSXCR+Q6sek8bf92,i=4096"))
	fmt.Println(err)
	// Output:
	// SCRAM-SHA-256 n,,n=,r=
	// auth: malformed SCRAM server message: server-first-message: the server nonce does not start with the client nonce
}
