package billing

import "strings"

func normalise(account string) string {
	return strings.ToLower(account)
}
