# Source: https://github.com/leftthomas/NPID/blob/96c6966a2d4ea90931d230050b85ec13f597508f/train.py
# Report: audited idiom: NPID train() writes the momentum-updated positive features back into a dataset-sized memory bank with memory_bank.index_copy_(...) after every step; the repository detaches the features first
# Shape: as in the repository: the features are detached (features.detach().cpu()) before the blend, and the Monte Carlo constant z kept in a module global is built from out.detach(), so nothing stored in the bank or the global holds a graph
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F
from tqdm import tqdm

from model import Model

n, m, feature_dim = 50000, 4096, 128
temperature, momentum = 0.1, 0.5
memory_bank = F.normalize(torch.randn(n, feature_dim), dim=-1)
z = None


def nce_loss(out, batch_size):
    global z
    # Monte Carlo estimate of the normalising constant from the first batch
    if z is None:
        z = out.detach().mean() * n
    output = out / z
    p_d = (output.select(dim=-1, index=0) / (output.select(dim=-1, index=0) + m / n)).log()
    p_n = ((m / n) / (output.narrow(dim=-1, start=1, length=m) + m / n)).log()
    return -(p_d.sum() + p_n.sum()) / batch_size


def sample_bank(pos_index, batch_size):
    idx = torch.randint(high=n, size=(batch_size, m + 1))
    idx[:, 0] = pos_index
    return torch.index_select(memory_bank, dim=0, index=idx.view(-1)).view(batch_size, -1, feature_dim)


def blend_positive(features, samples):
    pos_samples = samples.select(dim=1, index=0)
    pos_samples = features.detach().cpu() * momentum + pos_samples * (1.0 - momentum)
    return F.normalize(pos_samples, dim=-1)


def train(net, data_loader, train_optimizer, epoch, epochs):
    net.train()
    total_loss, total_num, train_bar = 0.0, 0, tqdm(data_loader)
    for data, target, pos_index in train_bar:
        data = data.to('cuda')
        train_optimizer.zero_grad()
        features = net(data)

        samples = sample_bank(pos_index, data.size(0))
        sim_matrix = torch.bmm(samples.to(device=features.device), features.unsqueeze(dim=-1)).view(data.size(0), -1)
        out = torch.exp(sim_matrix / temperature)
        loss = nce_loss(out, data.size(0))
        loss.backward()
        train_optimizer.step()

        # update memory bank
        pos_samples = blend_positive(features, samples)
        memory_bank.index_copy_(dim=0, index=pos_index, source=pos_samples)

        total_num += data.size(0)
        total_loss += loss.item() * data.size(0)
        train_bar.set_description('Train Epoch: [{}/{}] Loss: {:.4f}'.format(epoch, epochs, total_loss / total_num))
    return total_loss / total_num


if __name__ == '__main__':
    model = Model(feature_dim).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.03, momentum=0.9, weight_decay=5e-4)
    for epoch in range(1, 201):
        train(model, [], optimizer, epoch, 200)
