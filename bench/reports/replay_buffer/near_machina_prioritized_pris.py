# Source: https://github.com/DeepX-inc/machina/blob/master/machina/algos/prioritized_ddpg.py
# Report: prioritized DDPG as in the repo: update_pris() stores pris.detach(), losses are logged as .detach().cpu().numpy(), target nets are soft-updated through .detach().copy_()
# Shape: the priorities written into the run-long traj.data_map['pris'] are detached, so the buffer never joins the graph; the per-batch loss lists hold numpy copies
# Expect: near-miss: must be silent
import torch


class Traj:
    def __init__(self, data_map, device="cuda"):
        self.data_map = {k: torch.as_tensor(v, device=device) for k, v in data_map.items()}
        self.num_step = len(self.data_map["obs"])
        self.data_map["pris"] = torch.ones(self.num_step, device=device)

    def prioritized_random_batch(self, batch_size, epoch, return_indices=False):
        for _ in range(epoch * self.num_step // batch_size):
            probs = self.data_map["pris"] / self.data_map["pris"].sum()
            indices = torch.multinomial(probs, batch_size, replacement=True)
            batch = {k: v[indices] for k, v in self.data_map.items() if k != "pris"}
            yield (batch, indices) if return_indices else batch


def update_pris(traj, td_loss, indices, alpha=0.6, epsilon=1e-6):
    pris = (torch.abs(td_loss) + epsilon) ** alpha
    traj.data_map["pris"][indices] = pris.detach()
    return traj


def bellman(qf, targ_qf, targ_pol, batch, gamma):
    q = qf(batch["obs"], batch["acs"])
    with torch.no_grad():
        next_q = targ_qf(batch["next_obs"], targ_pol(batch["next_obs"]))
        targ = batch["rews"] + gamma * next_q * (1 - batch["dones"])
    return q - targ


def ag(pol, qf, batch):
    return -qf(batch["obs"], pol(batch["obs"])).mean()


def train(traj, pol, targ_pol, qf, targ_qf, optim_pol, optim_qf,
          epoch, batch_size, tau, gamma):
    pol_losses = []
    qf_losses = []
    for batch, indices in traj.prioritized_random_batch(batch_size, epoch, return_indices=True):
        td_loss = bellman(qf, targ_qf, targ_pol, batch, gamma)
        qf_bellman_loss = 0.5 * torch.mean(td_loss ** 2)
        optim_qf.zero_grad()
        qf_bellman_loss.backward()
        optim_qf.step()

        pol_loss = ag(pol, qf, batch)
        optim_pol.zero_grad()
        pol_loss.backward()
        optim_pol.step()

        for p, targ_p in zip(pol.parameters(), targ_pol.parameters()):
            targ_p.detach().copy_((1 - tau) * targ_p.detach() + tau * p.detach())
        for q, targ_q in zip(qf.parameters(), targ_qf.parameters()):
            targ_q.detach().copy_((1 - tau) * targ_q.detach() + tau * q.detach())

        qf_losses.append(qf_bellman_loss.detach().cpu().numpy())
        pol_losses.append(pol_loss.detach().cpu().numpy())

        traj = update_pris(traj, td_loss, indices)
    return {"PolLoss": pol_losses, "QfLoss": qf_losses}
