# Source: https://github.com/ctallec/world-models/blob/090534676e5d8cfaf26cc3b75f3f777a4922c5fb/trainmdrnn.py
# Report: World Models MDN-RNN training: one data_pass() serves train and test; get_loss() returns a dict of gmm/bce/mse/total losses and the running sums take .item() of each
# Shape: losses['loss'] etc. are graph-attached in the train branch (no_grad only in the test branch), but `cum_loss += losses['loss'].item()` keeps plain floats
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as f
from tqdm import tqdm

LSIZE, BSIZE, SEQ_LEN, SIZE, RED_SIZE = 32, 16, 32, 96, 64


def gmm_loss(batch, mus, sigmas, logpi):
    batch = batch.unsqueeze(-2)
    normal = torch.distributions.Normal(mus, sigmas)
    g_log_probs = logpi + normal.log_prob(batch).sum(dim=-1)
    return -torch.logsumexp(g_log_probs, dim=-1).mean()


def to_latent(vae, obs, next_obs):
    with torch.no_grad():
        obs, next_obs = [f.interpolate(x.view(-1, 3, SIZE, SIZE), size=RED_SIZE, mode='bilinear',
                                       align_corners=True) for x in (obs, next_obs)]
        (mu, logsig), (nmu, nlogsig) = [vae(x)[1:] for x in (obs, next_obs)]
        latent_obs = (mu + logsig.exp() * torch.randn_like(mu)).view(BSIZE, SEQ_LEN, LSIZE)
        latent_next = (nmu + nlogsig.exp() * torch.randn_like(nmu)).view(BSIZE, SEQ_LEN, LSIZE)
    return latent_obs, latent_next


def get_loss(mdrnn, latent_obs, action, reward, terminal, latent_next_obs):
    latent_obs, action, reward, terminal, latent_next_obs = [
        arr.transpose(1, 0) for arr in (latent_obs, action, reward, terminal, latent_next_obs)]
    mus, sigmas, logpi, rs, ds = mdrnn(action, latent_obs)
    gmm = gmm_loss(latent_next_obs, mus, sigmas, logpi)
    bce = f.binary_cross_entropy_with_logits(ds, terminal)
    mse = f.mse_loss(rs, reward)
    loss = (gmm + bce + mse) / (LSIZE + 2)
    return dict(gmm=gmm, bce=bce, mse=mse, loss=loss)


def data_pass(mdrnn, vae, optimizer, loader, epoch, train, device):
    if train:
        mdrnn.train()
    else:
        mdrnn.eval()
    cum_loss = 0
    cum_gmm = 0
    cum_bce = 0
    cum_mse = 0
    pbar = tqdm(total=len(loader.dataset), desc="Epoch {}".format(epoch))
    for i, data in enumerate(loader):
        obs, action, reward, terminal, next_obs = [arr.to(device) for arr in data]
        latent_obs, latent_next_obs = to_latent(vae, obs, next_obs)
        if train:
            losses = get_loss(mdrnn, latent_obs, action, reward, terminal, latent_next_obs)
            optimizer.zero_grad()
            losses['loss'].backward()
            optimizer.step()
        else:
            with torch.no_grad():
                losses = get_loss(mdrnn, latent_obs, action, reward, terminal, latent_next_obs)

        cum_loss += losses['loss'].item()
        cum_gmm += losses['gmm'].item()
        cum_bce += losses['bce'].item()
        cum_mse += losses['mse'].item()

        pbar.set_postfix_str("loss={:10.6f} bce={:10.6f} gmm={:10.6f} mse={:10.6f}".format(
            cum_loss / (i + 1), cum_bce / (i + 1), cum_gmm / LSIZE / (i + 1), cum_mse / (i + 1)))
        pbar.update(BSIZE)
    pbar.close()
    return cum_loss * BSIZE / len(loader.dataset)
