# Source: https://github.com/philtabor/Youtube-Code-Repository/blob/eb3aa9733158a4f7c4ba1fefaa812b27ffd889b6/ReinforcementLearning/PolicyGradient/SAC/sac_torch.py
# Report: variant of the SAC Agent.learn() the repo avoided: moving the actor update to the end (critics first, actor last) leaves actor_loss.backward(retain_graph=True) as the last backward of the step, and the agent keeps the attached policy entropy on self for logging, so every step's retained actor/critic graph stays alive
# Shape: Agent with actor, critic_1, critic_2, value, target_value networks and a numpy replay buffer; learn() is called once per env step from the episode loop; value update (retain), critic update (plain), actor update last with retain_graph=True, then self.entropy_trace.append(-log_probs.mean())
# Expect: TML006 line 53; TML001 line 55
import torch as T
import torch.nn.functional as F


class Agent:
    def __init__(self, actor, critic_1, critic_2, value, target_value, memory,
                 gamma=0.99, tau=0.005, batch_size=256, reward_scale=2):
        self.actor, self.critic_1, self.critic_2 = actor, critic_1, critic_2
        self.value, self.target_value, self.memory = value, target_value, memory
        self.gamma, self.tau, self.batch_size, self.scale = gamma, tau, batch_size, reward_scale
        self.entropy_trace = []

    def learn(self):
        if self.memory.mem_cntr < self.batch_size:
            return
        state, action, reward, new_state, done = self.memory.sample_buffer(self.batch_size)
        device = self.actor.device
        reward = T.tensor(reward, dtype=T.float).to(device)
        done = T.tensor(done).to(device)
        state_ = T.tensor(new_state, dtype=T.float).to(device)
        state = T.tensor(state, dtype=T.float).to(device)
        action = T.tensor(action, dtype=T.float).to(device)

        value = self.value(state).view(-1)
        value_ = self.target_value(state_).view(-1)
        value_[done] = 0.0
        actions, log_probs = self.actor.sample_normal(state, reparameterize=False)
        critic_value = T.min(self.critic_1(state, actions), self.critic_2(state, actions)).view(-1)
        self.value.optimizer.zero_grad()
        value_loss = 0.5 * F.mse_loss(value, critic_value - log_probs.view(-1))
        value_loss.backward(retain_graph=True)
        self.value.optimizer.step()

        self.critic_1.optimizer.zero_grad()
        self.critic_2.optimizer.zero_grad()
        q_hat = self.scale * reward + self.gamma * value_
        q1_old_policy = self.critic_1(state, action).view(-1)
        q2_old_policy = self.critic_2(state, action).view(-1)
        critic_loss = 0.5 * F.mse_loss(q1_old_policy, q_hat) + 0.5 * F.mse_loss(q2_old_policy, q_hat)
        critic_loss.backward()
        self.critic_1.optimizer.step()
        self.critic_2.optimizer.step()

        actions, log_probs = self.actor.sample_normal(state, reparameterize=True)
        log_probs = log_probs.view(-1)
        critic_value = T.min(self.critic_1(state, actions), self.critic_2(state, actions)).view(-1)
        actor_loss = T.mean(log_probs - critic_value)
        self.actor.optimizer.zero_grad()
        actor_loss.backward(retain_graph=True)  # expect: TML006
        self.actor.optimizer.step()
        self.entropy_trace.append(-log_probs.mean())  # expect: TML001

        self.update_network_parameters()

    def update_network_parameters(self):
        for target_param, param in zip(self.target_value.parameters(), self.value.parameters()):
            target_param.data.copy_(self.tau * param.data + (1 - self.tau) * target_param.data)


def run(env, agent, n_games=250):
    score_history = []
    for i in range(n_games):
        observation, done, score = env.reset(), False, 0.0
        while not done:
            action = agent.choose_action(observation)
            observation_, reward, done, info = env.step(action)
            score += reward
            agent.remember(observation, action, reward, observation_, done)
            agent.learn()
            observation = observation_
        score_history.append(score)
        print('episode', i, 'score %.1f' % score)
    return score_history
