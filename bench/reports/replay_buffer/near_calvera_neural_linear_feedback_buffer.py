# Source: https://github.com/neural-bandits/calvera/blob/main/src/calvera/bandits/neural_linear_bandit.py
# Report: NeuralLinear bandit with the embedding of the chosen contexts in record_feedback computed under no_grad, the way the repository's own update_embeddings already does
# Shape: embedded is produced inside torch.no_grad(), so the rows that ListDataBuffer.add_batch appends for the whole run carry no graph
# Expect: near-miss: must be silent
import lightning as pl
import torch


class ListDataBuffer:
    def __init__(self, max_size=None):
        self.max_size = max_size
        self.contexts, self.embedded, self.rewards = [], [], []

    def add_batch(self, contexts, embedded, rewards):
        for i in range(rewards.shape[0]):
            self.contexts.append(contexts[i])
            self.embedded.append(embedded[i] if embedded is not None else None)
            self.rewards.append(rewards[i].item())
        if self.max_size is not None and len(self.contexts) > self.max_size:
            excess = len(self.contexts) - self.max_size
            self.contexts, self.embedded, self.rewards = (
                self.contexts[excess:], self.embedded[excess:], self.rewards[excess:])

    def get_all(self):
        return torch.stack(self.contexts), torch.stack(self.embedded), torch.tensor(self.rewards)


class NeuralLinearBandit(pl.LightningModule):
    def __init__(self, network, n_embedding, lambda_=1.0):
        super().__init__()
        self.network = network
        self.head = torch.nn.Linear(n_embedding, 1)
        self.buffer = ListDataBuffer()
        self.register_buffer("precision", torch.eye(n_embedding) * lambda_)
        self.register_buffer("b", torch.zeros(n_embedding))

    def _embed(self, contexts):
        batch, n_arms = contexts.shape[:2]
        z = self.network(contexts.view(batch * n_arms, *contexts.shape[2:]))
        return z.view(batch, n_arms, -1)

    def forward(self, contexts):
        with torch.no_grad():
            z = self._embed(contexts)
            theta = torch.linalg.solve(self.precision, self.b)
            scores = z @ theta
        chosen = torch.nn.functional.one_hot(scores.argmax(dim=1), scores.shape[1])
        return chosen, torch.ones(contexts.shape[0])

    def record_feedback(self, chosen_contexts, rewards):
        with torch.no_grad():
            embedded = self._embed(chosen_contexts)
        self.buffer.add_batch(chosen_contexts.squeeze(1), embedded.squeeze(1), rewards.reshape(-1))

    def training_step(self, batch, batch_idx):
        ctx, _, y = batch
        pred = self.head(self.network(ctx)).squeeze(-1)
        return torch.nn.functional.mse_loss(pred, y)

    def update_embeddings(self):
        ctx, _, _ = self.buffer.get_all()
        with torch.no_grad():
            self.buffer.embedded = list(self.network(ctx).unbind(0))

    def configure_optimizers(self):
        return torch.optim.Adam(list(self.network.parameters()) + list(self.head.parameters()), lr=1e-3)


def run(bandit, env, trainer_factory, n_rounds, retrain_every=1024):
    for t in range(n_rounds):
        contexts = env.contexts(batch_size=32)
        chosen, _ = bandit(contexts)
        rewards = env.rewards(contexts, chosen)
        idx = chosen.argmax(dim=1)
        chosen_contexts = contexts[torch.arange(contexts.shape[0]), idx].unsqueeze(1)
        bandit.record_feedback(chosen_contexts, rewards.unsqueeze(1))
        if (t + 1) % retrain_every == 0:
            trainer_factory().fit(bandit)
            bandit.update_embeddings()
