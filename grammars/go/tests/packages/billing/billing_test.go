package billing

import "testing"

func TestOpen(t *testing.T) {
	if Open("ACCT") != "acct" {
		t.Fatal("open")
	}
}
