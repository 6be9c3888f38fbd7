# Source: https://github.com/Peilin-FF/exp-LN/blob/1857af489b946a38f52245da92c7673552011711/models/mamba_ssm/ops/triton/Batchnorm.py
# Report: the same hand-written BatchNorm with the running statistics kept as buffers and fed from detached batch statistics (what nn.BatchNorm1d does internally)
# Shape: the loop-carried self.running_mean/self.running_var are rebuilt from mean.detach()/var.detach(), so the new value holds no graph; the attached mean/var are only used for this step's normalisation
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class BatchNorm(nn.Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        super().__init__()
        self.eps = eps
        self.momentum = momentum
        self.gamma = nn.Parameter(torch.ones(num_features))
        self.beta = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        if self.training:
            mean = x.mean([0, 1], keepdim=True)
            var = x.var([0, 1], keepdim=True, unbiased=False)
            self.running_mean = self.momentum * mean.detach() + (1 - self.momentum) * self.running_mean
            self.running_var = self.momentum * var.detach() + (1 - self.momentum) * self.running_var
        else:
            mean = self.running_mean
            var = self.running_var
        x_hat = (x - mean) / torch.sqrt(var + self.eps)
        return self.gamma.view(1, 1, -1) * x_hat + self.beta.view(1, 1, -1)


class MixerBlock(nn.Module):
    """Stands in for the Mamba2 mixer: in_proj -> sequence mixing -> norm -> out_proj."""

    def __init__(self, d_model, expand=2):
        super().__init__()
        d_inner = expand * d_model
        self.in_proj = nn.Linear(d_model, d_inner)
        self.mix = nn.Conv1d(d_inner, d_inner, kernel_size=4, padding=3, groups=d_inner)
        self.norm = BatchNorm(d_inner)
        self.out_proj = nn.Linear(d_inner, d_model)

    def forward(self, u):
        seqlen = u.shape[1]
        y = self.in_proj(u)
        y = self.mix(y.transpose(1, 2))[..., :seqlen].transpose(1, 2)
        y = self.norm(y)
        return u + self.out_proj(y)


class Forecaster(nn.Module):
    def __init__(self, n_vars, d_model=64, n_layers=2, pred_len=96):
        super().__init__()
        self.embed = nn.Linear(n_vars, d_model)
        self.blocks = nn.ModuleList([MixerBlock(d_model) for _ in range(n_layers)])
        self.head = nn.Linear(d_model, n_vars)
        self.pred_len = pred_len

    def forward(self, x):
        h = self.embed(x)
        for block in self.blocks:
            h = block(h)
        return self.head(h)[:, -self.pred_len:, :]


def train(model, train_loader, epochs, device):
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    criterion = nn.MSELoss()
    for epoch in range(epochs):
        model.train()
        train_loss = []
        for batch_x, batch_y in train_loader:
            batch_x, batch_y = batch_x.float().to(device), batch_y.float().to(device)
            optimizer.zero_grad()
            outputs = model(batch_x)
            loss = criterion(outputs, batch_y[:, -model.pred_len:, :])
            train_loss.append(loss.item())
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch + 1}: train loss {sum(train_loss) / len(train_loss):.5f}")
