# Source: https://github.com/wgrathwohl/JEM/blob/7f0779a0541256a77c50c52971ecdb50a8ce2e66/train_wrn_ebm.py
# Report: audited correct idiom: JEM's SGLD sampler detaches the final chain state (x_k.detach()) before writing it back into the persistent replay buffer with replay_buffer[buffer_inds] = final_samples.cpu()
# Shape: rewrite that drops the .detach(): the sampled chain state x_k (a GPU leaf with requires_grad) is written into the replay buffer that lives for the whole run; the index write gives the buffer a CopySlices history and the .cpu() copy keeps every step's GPU x_k alive through it
# Expect: TML001 line 41
import torch as t
import torch.nn as nn

im_sz = 32
n_ch = 3


def init_random(args, bs):
    return t.FloatTensor(bs, n_ch, im_sz, im_sz).uniform_(-1, 1)


def get_sample_q(args, device):
    def sample_p_0(replay_buffer, bs, y=None):
        if len(replay_buffer) == 0:
            return init_random(args, bs), []
        buffer_size = len(replay_buffer) if y is None else len(replay_buffer) // args.n_classes
        inds = t.randint(0, buffer_size, (bs,))
        if y is not None:
            inds = y.cpu() * buffer_size + inds
        buffer_samples = replay_buffer[inds]
        random_samples = init_random(args, bs)
        choose_random = (t.rand(bs) < args.reinit_freq).float()[:, None, None, None]
        samples = choose_random * random_samples + (1 - choose_random) * buffer_samples
        return samples.to(device), inds

    def sample_q(f, replay_buffer, y=None, n_steps=args.n_steps):
        f.eval()
        bs = args.batch_size if y is None else y.size(0)
        init_sample, buffer_inds = sample_p_0(replay_buffer, bs=bs, y=y)
        x_k = t.autograd.Variable(init_sample, requires_grad=True)
        for k in range(n_steps):
            f_prime = t.autograd.grad(f(x_k, y=y).sum(), [x_k])[0]
            x_k.data += args.sgld_lr * f_prime + args.sgld_std * t.randn_like(x_k)
        f.train()
        final_samples = x_k
        if len(replay_buffer) > 0:
            replay_buffer[buffer_inds] = final_samples.cpu()  # expect: TML001
        return final_samples

    return sample_q


def train(args, f, replay_buffer, dload_train, dload_train_labeled, device):
    sample_q = get_sample_q(args, device)
    optim = t.optim.Adam(f.parameters(), lr=args.lr, betas=[0.9, 0.999])
    cur_iter = 0
    for epoch in range(args.n_epochs):
        for i, (x_p_d, _) in enumerate(dload_train):
            x_p_d = x_p_d.to(device)
            x_lab, y_lab = next(dload_train_labeled)
            x_lab, y_lab = x_lab.to(device), y_lab.to(device)

            x_q = sample_q(f, replay_buffer)
            fp = f(x_p_d).mean()
            fq = f(x_q).mean()
            L = args.p_x_weight * -(fp - fq)

            logits = f.classify(x_lab)
            L = L + args.p_y_given_x_weight * nn.CrossEntropyLoss()(logits, y_lab)

            optim.zero_grad()
            L.backward()
            optim.step()
            cur_iter += 1
            if cur_iter % args.print_every == 0:
                print(epoch, i, fp.item(), fq.item(), L.item())
    return replay_buffer
