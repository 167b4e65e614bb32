package chaos

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/purser-ai/purser/internal/auth"
)

// drivers runs every user's turns, numbered from next, until turns are
// handed out or ctx ends; each user waits pause between its changes.
// finished counts the turns done; wg ends when every user has stopped.
func drivers(ctx context.Context, users []*user, turns int, pause time.Duration, next, finished *atomic.Int64) *sync.WaitGroup {
	var wg sync.WaitGroup
	for _, u := range users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1))
				if k > turns || ctx.Err() != nil {
					return
				}
				u.turn(ctx, k, 90*time.Second)
				finished.Add(1)
				if pause > 0 {
					select {
					case <-ctx.Done():
					case <-time.After(pause):
					}
				}
			}
		}()
	}
	return &wg
}

// awaitTurns waits until every driver of wg is done, or ctx ends, which
// stops them (stopDriving) and waits for them; every 5 s it calls say
// with the time since it began.
func awaitTurns(ctx context.Context, wg *sync.WaitGroup, stopDriving func(), say func(elapsed time.Duration)) {
	progress := time.NewTicker(5 * time.Second)
	defer progress.Stop()
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()
	start := time.Now()
	for {
		select {
		case <-allDone:
			return
		case <-ctx.Done():
			stopDriving()
			<-allDone
			return
		case <-progress.C:
			say(time.Since(start).Round(time.Second))
		}
	}
}

// connectUsers mints a member's token for each of n users and connects
// them, user i to ingresses[i%len(ingresses)] (going on at the others when
// that one stops answering). closeAll closes every socket opened, also
// when err says a user could not connect.
func connectUsers(ctx context.Context, secret string, n int, seed uint64, ingresses []string) (users []*user, closeAll func(), err error) {
	minter := auth.NewMinter([]byte(secret), "purser", "purser", time.Now)
	users = make([]*user, n)
	closeAll = func() {
		for _, u := range users {
			if u != nil {
				u.client.Close()
			}
		}
	}
	for i := range users {
		id := fmt.Sprintf("u%03d", i)
		tok, err := minter.Mint("chaos", id, []auth.Role{auth.RoleMember}, 12*time.Hour)
		if err != nil {
			return users, closeAll, err
		}
		if len(ingresses) == 1 {
			users[i] = newUser(id, tok, ingresses[0], seed+uint64(i))
		} else {
			users[i] = newUserOn(id, tok, ingresses, i%len(ingresses), seed+uint64(i))
		}
		if err := users[i].connect(ctx); err != nil {
			return users, closeAll, err
		}
	}
	return users, closeAll, nil
}
