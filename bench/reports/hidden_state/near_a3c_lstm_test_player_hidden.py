# Source: https://github.com/dgriff777/rl_a3c_pytorch/blob/04f7b17a2bd83a03d30bacee11cb36045bc82c5b/test.py
# Report: audit of an A3C-LSTM Atari tester whose player keeps the LSTM state in player.hx / player.cx across a whole evaluation episode; this is the fixed form of its volatile=True idiom for PyTorch >= 0.4: the episode loop runs under torch.no_grad(), so the carried LSTM state holds no graph
# Shape: Agent class whose evaluate_episode() sets model.eval(), resets self.hx/self.cx from zeros and runs the while-not-done loop inside `with torch.no_grad():`, still feeding (state, (self.hx, self.cx)) back into the model; a test() driver reloads the shared weights and logs each episode
# Expect: near-miss: must be silent
import time
import logging

import torch
import torch.nn.functional as F

log = logging.getLogger("a3c_test")


class Agent:
    def __init__(self, model, env, max_episode_length=10000, device="cuda"):
        self.model = model.to(device)
        self.env = env
        self.device = device
        self.max_episode_length = max_episode_length
        self.hx = None
        self.cx = None
        self.eps_len = 0

    def _obs(self, frame):
        return torch.from_numpy(frame).float().unsqueeze(0).to(self.device)

    def evaluate_episode(self):
        self.model.eval()
        state = self._obs(self.env.reset())
        # volatile=True in the original; no_grad() below is its modern form
        self.hx = torch.zeros(1, 512, device=self.device)
        self.cx = torch.zeros(1, 512, device=self.device)
        self.eps_len = 0
        reward_sum, done = 0.0, False
        with torch.no_grad():
            while not done:
                value, logit, (self.hx, self.cx) = self.model((state, (self.hx, self.cx)))
                action = F.softmax(logit, dim=1).argmax(dim=1).item()
                frame, reward, done, info = self.env.step(action)
                state = self._obs(frame)
                reward_sum += reward
                self.eps_len += 1
                done = done or self.eps_len >= self.max_episode_length
        return reward_sum


def test(shared_model, make_model, make_env, save_path, num_episodes=100, save_score_level=20.0):
    model = make_model()
    player = Agent(model, make_env())
    start = time.time()
    total = 0.0
    for episode in range(1, num_episodes + 1):
        player.model.load_state_dict(shared_model.state_dict())
        reward_sum = player.evaluate_episode()
        total += reward_sum
        log.info(
            "Time %s, episode reward %.1f, episode length %d, reward mean %.4f",
            time.strftime("%Hh %Mm %Ss", time.gmtime(time.time() - start)),
            reward_sum, player.eps_len, total / episode,
        )
        if reward_sum > save_score_level:
            torch.save(player.model.state_dict(), save_path)
    return total / num_episodes
