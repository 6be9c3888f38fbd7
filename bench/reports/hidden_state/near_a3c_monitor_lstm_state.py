# Source: https://github.com/ikostrikov/pytorch-a3c/blob/48d95844755e2c3e2c7e48bbd1a7141f7212b63f/test.py
# Report: audit: the A3C monitor process plays episodes of up to max_episode_length steps with an LSTMCell policy, feeding (hx, cx) back every step; the repository runs the forward under torch.no_grad() and detaches the state each step; the variant it avoided does neither, so one episode's autograd chain grows with every env step
# Shape: as in the repository: the same test() worker rebinds (hx, cx) from the model call on themselves every step, but the state is detached between steps and the forward runs under torch.no_grad(), so no graph is kept
# Expect: near-miss: must be silent
import time
from collections import deque

import torch
import torch.nn.functional as F

from envs import create_atari_env
from model import ActorCritic


def log_episode(start_time, counter, reward_sum, episode_length):
    elapsed = time.time() - start_time
    print("Time {}, num steps {}, FPS {:.0f}, episode reward {}, episode length {}".format(
        time.strftime("%Hh %Mm %Ss", time.gmtime(elapsed)),
        counter.value, counter.value / elapsed, reward_sum, episode_length))


def test(rank, args, shared_model, counter):
    torch.manual_seed(args.seed + rank)
    env = create_atari_env(args.env_name)
    env.seed(args.seed + rank)

    model = ActorCritic(env.observation_space.shape[0], env.action_space)
    model.eval()

    state = torch.from_numpy(env.reset())
    reward_sum = 0
    done = True
    start_time = time.time()

    # stop episodes where the agent repeats one action forever
    recent_actions = deque(maxlen=100)
    episode_length = 0
    while True:
        episode_length += 1
        if done:
            # pick up the latest weights at every episode start
            model.load_state_dict(shared_model.state_dict())
            cx = torch.zeros(1, 256)
            hx = torch.zeros(1, 256)
        else:
            cx = cx.detach()
            hx = hx.detach()

        with torch.no_grad():
            value, logit, (hx, cx) = model((state.unsqueeze(0), (hx, cx)))
        prob = F.softmax(logit, dim=-1)
        action = prob.max(1, keepdim=True)[1].numpy()

        state, reward, done, _ = env.step(action[0, 0])
        done = done or episode_length >= args.max_episode_length
        reward_sum += reward

        recent_actions.append(action[0, 0])
        if recent_actions.count(recent_actions[0]) == recent_actions.maxlen:
            done = True

        if done:
            log_episode(start_time, counter, reward_sum, episode_length)
            reward_sum = 0
            episode_length = 0
            recent_actions.clear()
            state = env.reset()
            time.sleep(60)

        state = torch.from_numpy(state)
