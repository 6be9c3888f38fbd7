# Source: https://github.com/edenton/svg/blob/32c88f81b8b5c3e1d139ddb1dae599f82cd84a20/train_svg_lp.py
# Report: SVG-LP video prediction: train(x) unrolls the frame predictor over past+future frames, backprops once, and returns per-frame mse/kld for the epoch sums; here the helper returns the loss tensors themselves (the `.data.cpu().numpy()` dropped)
# Shape: train() returns mse / n, still attached to the unrolled graph; `epoch_mse += mse` in the epoch loop chains every batch's loss node into one tensor that lives all epoch
# Expect: TML001 lines 73, 74
import torch
import torch.nn as nn


class GaussianLSTM(nn.Module):
    def __init__(self, in_dim, out_dim, hidden, batch_size):
        super().__init__()
        self.cell = nn.LSTMCell(in_dim, hidden)
        self.mu = nn.Linear(hidden, out_dim)
        self.logvar = nn.Linear(hidden, out_dim)
        self.hidden_size, self.batch_size = hidden, batch_size
        self.hidden = self.init_hidden()

    def init_hidden(self):
        z = torch.zeros(self.batch_size, self.hidden_size, device='cuda')
        return (z, z.clone())

    def forward(self, x):
        self.hidden = self.cell(x, self.hidden)
        h = self.hidden[0]
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + torch.randn_like(mu) * logvar.mul(0.5).exp()
        return z, mu, logvar


def kl_criterion(mu1, logvar1, mu2, logvar2, batch_size):
    s1, s2 = logvar1.mul(0.5).exp(), logvar2.mul(0.5).exp()
    kld = torch.log(s2 / s1) + (torch.exp(logvar1) + (mu1 - mu2) ** 2) / (2 * torch.exp(logvar2)) - 0.5
    return kld.sum() / batch_size


def train(opt, x, nets, optimizers, mse_criterion):
    encoder, decoder, frame_predictor, posterior, prior = nets
    for net in nets:
        net.zero_grad()
    frame_predictor.hidden = frame_predictor.init_hidden()
    posterior.hidden = posterior.init_hidden()
    prior.hidden = prior.init_hidden()

    mse, kld = 0, 0
    for i in range(1, opt.n_past + opt.n_future):
        h, skip = encoder(x[i - 1])
        h_target = encoder(x[i])[0]
        z_t, mu, logvar = posterior(h_target)
        _, mu_p, logvar_p = prior(h)
        h_pred = frame_predictor(torch.cat([h, z_t], 1))
        x_pred = decoder([h_pred, skip])
        mse += mse_criterion(x_pred, x[i])
        kld += kl_criterion(mu, logvar, mu_p, logvar_p, opt.batch_size)

    loss = mse + kld * opt.beta
    loss.backward()
    for o in optimizers:
        o.step()
    n = opt.n_past + opt.n_future
    return mse / n, kld / n


def run(opt, nets, optimizers, batches):
    mse_criterion = nn.MSELoss()
    for epoch in range(opt.niter):
        for net in nets:
            net.train()
        epoch_mse = 0
        epoch_kld = 0
        for i in range(opt.epoch_size):
            x = next(batches)
            mse, kld = train(opt, x, nets, optimizers, mse_criterion)
            epoch_mse += mse  # expect: TML001
            epoch_kld += kld  # expect: TML001
        print('[%02d] mse loss: %.5f | kld loss: %.5f' % (epoch, epoch_mse / opt.epoch_size, epoch_kld / opt.epoch_size))
