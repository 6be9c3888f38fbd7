# Source: https://github.com/guopengf/FL-MRCM/issues/10
# Report: federated MRI-reconstruction client leaked GPU memory because the adversarial (domain) loss tensor was appended to the per-batch loss list without detach
# Shape: LocalUpdate.train keeps batch_loss_* lists across the inner batch loop; the adversarial generator loss goes in as a live tensor while it is also used for backward
# Expect: TML001 line 59
import torch
from torch import nn
from torch.utils.data import DataLoader


class AdversarialLocalUpdate:
    def __init__(self, args, device, dataset, dataset_target, optimizer, optimizer_fd, source_only):
        self.args = args
        self.device = device
        self.recon_loss = nn.L1Loss().to(device)
        self.adv_loss = nn.BCEWithLogitsLoss().to(device)
        self.ldr_train = DataLoader(dataset, batch_size=args.local_bs, shuffle=True)
        self.ldr_target = DataLoader(dataset_target, batch_size=args.local_bs, shuffle=True)
        self.optimizer = optimizer
        self.optimizer_fd = optimizer_fd
        self.source_only = source_only

    def _domain_codes(self, n, src):
        code = torch.zeros(n, 2, device=self.device)
        code[:, 0 if src else 1] = 1.0
        return code

    def train(self, net, net_fd, epoch, writer, site_name):
        net.train()
        net_fd.train()
        epoch_loss_l1, epoch_loss_adv_g = [], []
        for _ in range(self.args.local_ep):
            batch_loss_l1, batch_loss_adv_g = [], []
            for (inp, target, *_), (inp_t, *_) in zip(self.ldr_train, self.ldr_target):
                net.zero_grad()
                net_fd.zero_grad()
                output, z = net(inp.to(self.device))
                _, z_t = net(inp_t.to(self.device))
                src_code = self._domain_codes(inp.shape[0], True)
                tgt_code = self._domain_codes(inp_t.shape[0], False)

                if not self.source_only:
                    for p in net_fd.parameters():
                        p.requires_grad = True
                    d_loss = 0.5 * (self.adv_loss(net_fd(z.detach()), 1 - src_code)
                                    + self.adv_loss(net_fd(z_t.detach()), 1 - tgt_code))
                    d_loss.backward()
                    self.optimizer_fd.step()

                for p in net_fd.parameters():
                    p.requires_grad = False
                loss_adv_g = 0
                if not self.source_only:
                    loss_adv_g = 0.5 * (self.adv_loss(net_fd(z), src_code)
                                        + self.adv_loss(net_fd(z_t), tgt_code))

                l1 = self.recon_loss(output, target.to(self.device))
                batch_loss_l1.append(l1.detach().item())
                loss = l1 + loss_adv_g
                batch_loss_adv_g.append(loss_adv_g)  # expect: TML001
                loss.backward()
                self.optimizer.step()

            epoch_loss_l1.append(sum(batch_loss_l1) / len(batch_loss_l1))
            epoch_loss_adv_g.append(float(sum(batch_loss_adv_g)) / len(batch_loss_adv_g))
        writer.add_scalar("TrainLoss/L1/" + site_name, sum(epoch_loss_l1) / len(epoch_loss_l1), epoch)
        writer.add_scalar("TrainLoss/adv_g/" + site_name, sum(epoch_loss_adv_g) / len(epoch_loss_adv_g), epoch)
        return net.state_dict(), sum(epoch_loss_l1) / len(epoch_loss_l1)
