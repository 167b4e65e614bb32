package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/spf13/cobra"

	"github.com/purser-ai/purser/internal/app"
	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/pkg/contracts"
)

// chatCmd is a small terminal client for the websocket protocol: type a
// message, answer a proposal with yes or no.
func chatCmd(cfg *config.Config, stdout io.Writer) *cobra.Command {
	var url, token, conversation, tz string
	cmd := &cobra.Command{
		Use:   "chat",
		Short: "Chat with a running purser from the terminal (yes/no answers a proposal)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if token == "" {
				token = os.Getenv("PURSER_TOKEN")
			}
			if token == "" {
				secret, err := app.Secret(*cfg)
				if err != nil {
					return err
				}
				if token, err = auth.NewMinter(secret, cfg.JWTIssuer, cfg.JWTAudience, time.Now).Mint(app.DemoTenant, app.DemoUser, []auth.Role{auth.RoleOwner}, time.Hour); err != nil {
					return err
				}
			}
			if url == "" {
				url = localWebsocketURL(cfg.HTTPAddr)
			}
			conn, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{
				HTTPHeader:   http.Header{"Authorization": []string{"Bearer " + token}},
				Subprotocols: []string{auth.Subprotocol},
			})
			if err != nil {
				return fmt.Errorf("connect to %s: %w", url, err)
			}
			defer conn.CloseNow()
			return chat(ctx, conn, os.Stdin, stdout, conversation, tz)
		},
	}
	cmd.Flags().StringVar(&url, "url", "", "websocket URL (default: the local server at PURSER_HTTP_ADDR, ws://127.0.0.1:8080/v1/ws)")
	cmd.Flags().StringVar(&token, "token", "", "bearer token (default $PURSER_TOKEN, else one minted for the demo user)")
	cmd.Flags().StringVar(&conversation, "conversation", fmt.Sprintf("cli-%d", time.Now().Unix()), "conversation id")
	cmd.Flags().StringVar(&tz, "timezone", "UTC", "your IANA time zone")
	return cmd
}

func chat(ctx context.Context, conn *websocket.Conn, in io.Reader, out io.Writer, conversation, tz string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pending := make(chan string, 8) // proposal ids, newest last
	go func() {
		defer cancel()
		for {
			_, data, err := conn.Read(ctx)
			if err != nil {
				return
			}
			var f contracts.ServerFrame
			if json.Unmarshal(data, &f) != nil {
				continue
			}
			switch f.Type {
			case contracts.FrameAnswer:
				fmt.Fprintf(out, "\npurser: %s\n> ", f.Answer.Content)
			case contracts.FrameClarify:
				fmt.Fprintf(out, "\npurser asks: %s\n> ", f.Clarify.Question)
			case contracts.FrameProposal:
				fmt.Fprintf(out, "\npurser proposes: %s (yes/no)\n> ", f.Proposal.Summary)
				select {
				case pending <- f.Proposal.ProposalID:
				default:
				}
			case contracts.FrameToolStart:
				fmt.Fprintf(out, "  … %s\n", f.Tool.Tool)
			case contracts.FrameNotification:
				fmt.Fprintf(out, "\n[notification] %s\n> ", f.Notification.Body)
			case contracts.FrameError:
				fmt.Fprintf(out, "\nerror: %s\n> ", f.Error.Message)
			}
		}
	}()
	fmt.Fprint(out, "> ")
	sc := bufio.NewScanner(in)
	for n := 1; sc.Scan(); n++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			fmt.Fprint(out, "> ")
			continue
		}
		var frame any = contracts.MessageFrame{Type: contracts.FrameMessage, ID: fmt.Sprintf("m%d-%d", time.Now().UnixNano(), n), ConversationID: conversation, Text: text, Timezone: tz}
		if d := decision(text); d != "" {
			select {
			case id := <-pending:
				frame = contracts.ConfirmFrame{Type: contracts.FrameConfirm, ConversationID: conversation, ProposalID: id, Decision: d}
			default:
			}
		}
		b, _ := json.Marshal(frame)
		if err := conn.Write(ctx, websocket.MessageText, b); err != nil {
			return err
		}
	}
	return nil
}

func decision(text string) string {
	switch strings.ToLower(strings.Trim(text, ".! ")) {
	case "yes", "y", "ok", "approve", "confirm":
		return "approve"
	case "no", "n", "reject", "cancel":
		return "reject"
	}
	return ""
}

// localWebsocketURL is the websocket of a server listening on addr (the
// PURSER_HTTP_ADDR that `purser up` uses); a wildcard host is this machine.
func localWebsocketURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "ws://127.0.0.1:8080/v1/ws"
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "ws://" + net.JoinHostPort(host, port) + "/v1/ws"
}
