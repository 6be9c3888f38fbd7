# Source: https://github.com/kc-ml2/SimpleDreamer/issues/7
# Report: Dreamer's environment_interaction() ran the encoder, RSSM and actor without torch.no_grad and raised CUDA out of memory on environments without a time limit; decorating it with @torch.no_grad() kept memory flat.
# Shape: during data collection for the replay buffer, the RSSM's deterministic state (and the sampled action) is fed back into the next env step without detach, so the autograd graph grows with episode length (closest code TML005; the buffer itself only gets numpy copies).
# Expect: TML005 line 29
import torch


class Dreamer:
    def __init__(self, encoder, rssm, actor, buffer, device, config):
        self.encoder = encoder
        self.rssm = rssm
        self.actor = actor
        self.buffer = buffer
        self.device = device
        self.config = config

    def _embed(self, observation):
        obs = torch.as_tensor(observation, dtype=torch.float32, device=self.device)
        return self.encoder(obs.unsqueeze(0)).reshape(1, -1)

    def environment_interaction(self, env, num_interaction_episodes, train=True):
        for epi in range(num_interaction_episodes):
            posterior, deterministic = self.rssm.recurrent_model_input_init(1)
            action = torch.zeros(1, self.config.action_size, device=self.device)
            observation = env.reset()
            embedded_observation = self._embed(observation)
            score, done = 0.0, False
            while not done:
                deterministic = self.rssm.recurrent_model(posterior, action, deterministic)  # expect: TML005
                _, posterior = self.rssm.representation_model(embedded_observation, deterministic)
                action = self.actor(posterior, deterministic)
                buffer_action = action.detach().cpu().numpy()
                next_observation, reward, done, _ = env.step(buffer_action[0])
                if train:
                    self.buffer.add(observation, buffer_action, reward, next_observation, done)
                score += reward
                embedded_observation = self._embed(next_observation)
                observation = next_observation
            print(f"episode {epi}: score {score:.1f}")
