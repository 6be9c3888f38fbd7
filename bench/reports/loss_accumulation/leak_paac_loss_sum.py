# Source: https://github.com/qbx2/PAAC.pytorch/issues/1
# Report: the PAAC master added each update's loss Variable into loss_sum for printing, so its graph was only freed at the next print flush ("too late memory free")
# Shape: per-update loss is backpropagated, then added into a print accumulator bound before the update loop and flushed only every print_step updates
# Expect: TML001 line 47
import torch


class Master:
    def __init__(self, paac, optim, workers, args):
        self.paac = paac
        self.optim = optim
        self.workers = workers
        self.args = args

    def train(self, states, n_max, t_max, gamma, beta, print_step):
        paac, optim = self.paac, self.optim
        loss_sum = 0
        entropy_sum = 0
        for n in range(n_max):
            values, log_a, rewards, terminals = [], [], [], []
            negated_entropy = 0
            for t in range(t_max):
                policy, value = paac(states)
                actions = policy.multinomial(1).squeeze(1)
                log_p, neg_h = paac.log_and_negated_entropy(policy)
                negated_entropy = negated_entropy + neg_h
                values.append(value.squeeze(1))
                log_a.append(log_p.gather(1, actions.unsqueeze(1)).squeeze(1))
                states, reward, done = self.step_workers(actions)
                rewards.append(reward)
                terminals.append(done)

            with torch.no_grad():
                q = paac.value(states).squeeze(1)
            loss = 0
            for t in reversed(range(t_max)):
                q = rewards[t] + (1.0 - terminals[t]) * gamma * q
                adv = q - values[t]
                loss = loss - (log_a[t] * adv.detach()).mean() + adv.pow(2).mean()
            entropy = -negated_entropy / states.size(0)
            loss = loss - beta * entropy

            optim.zero_grad()
            loss.backward()
            optim.step()

            loss_sum += loss  # expect: TML001
            entropy_sum += entropy.item()

            if n % print_step == print_step - 1:
                print("iteration", n + 1, "average loss:", float(loss_sum) / print_step / t_max)
                print("average entropy:", entropy_sum / print_step)
                loss_sum = 0
                entropy_sum = 0

    def step_workers(self, actions):
        for w in self.workers:
            w.put_actions(actions[w.env_slice])
        return self.workers[0].gather_observations(self.workers)
