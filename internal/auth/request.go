package auth

import (
	"fmt"
	"net/http"
	"strings"
)

// TokenFromRequest takes the bearer token from the Authorization header or,
// for browsers, which cannot set headers on a websocket, from the
// Sec-WebSocket-Protocol offers: the client offers Subprotocol and
// "purser.bearer.<token>". The header wins when both are present. A token in
// the URL or query is never read. fromSubprotocol reports where the token
// came from. Errors wrap ErrMissingToken and never contain the token.
func TokenFromRequest(r *http.Request) (token string, fromSubprotocol bool, err error) {
	if hs := r.Header.Values("Authorization"); len(hs) > 0 {
		if len(hs) > 1 {
			return "", false, fmt.Errorf("%w: more than one Authorization header", ErrMissingToken)
		}
		scheme, t, _ := strings.Cut(strings.TrimSpace(hs[0]), " ")
		t = strings.TrimSpace(t)
		if !strings.EqualFold(scheme, "Bearer") || t == "" || strings.ContainsAny(t, " \t") {
			return "", false, fmt.Errorf("%w: Authorization is not \"Bearer <token>\"", ErrMissingToken)
		}
		return t, false, nil
	}
	var offersV1 bool
	var tokens []string
	for _, line := range r.Header.Values("Sec-WebSocket-Protocol") {
		for offer := range strings.SplitSeq(line, ",") {
			offer = strings.TrimSpace(offer)
			if offer == Subprotocol {
				offersV1 = true
			} else if t, ok := strings.CutPrefix(offer, bearerPrefix); ok {
				tokens = append(tokens, t)
			}
		}
	}
	switch {
	case len(tokens) == 0:
		return "", false, fmt.Errorf("%w: no Authorization header or %s<token> subprotocol", ErrMissingToken, bearerPrefix)
	case len(tokens) > 1:
		return "", false, fmt.Errorf("%w: more than one %s subprotocol offer", ErrMissingToken, bearerPrefix)
	case tokens[0] == "":
		return "", false, fmt.Errorf("%w: empty %s subprotocol offer", ErrMissingToken, bearerPrefix)
	case !offersV1:
		// Without it the server could select nothing but the token offer.
		return "", false, fmt.Errorf("%w: %s<token> must be offered with %s", ErrMissingToken, bearerPrefix, Subprotocol)
	}
	return tokens[0], true, nil
}
