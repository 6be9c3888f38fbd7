# Source: https://github.com/hirofumi0810/neural_sp/blob/008ca81314449e84695a9541527265783b61f831/neural_sp/bin/lm/train.py
# Report: audited correct idiom in neural_sp (end-to-end ASR toolkit), RNNLM training for shallow fusion: the LSTM state dict {'hxs', 'cxs'} is carried across BPTT chunks and passed through model.module.repackage_state(hidden) after every step, as kept here
# Shape: the recurrent state dict returned by forward is fed back next step, but only after model.module.repackage_state detaches 'hxs'/'cxs' in place (a helper reached through the DataParallel wrapper)
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class RNNLM(nn.Module):
    def __init__(self, vocab, emb_dim, n_units, n_layers, dropout=0.1):
        super().__init__()
        self.n_units = n_units
        self.n_layers = n_layers
        self.embed = nn.Embedding(vocab, emb_dim)
        self.rnn = nn.LSTM(emb_dim, n_units, n_layers, batch_first=True, dropout=dropout)
        self.output = nn.Linear(n_units, vocab)

    def zero_state(self, batch_size):
        w = next(self.parameters())
        return {'hxs': w.new_zeros(self.n_layers, batch_size, self.n_units),
                'cxs': w.new_zeros(self.n_layers, batch_size, self.n_units)}

    def repackage_state(self, state):
        state['hxs'] = state['hxs'].detach()
        state['cxs'] = state['cxs'].detach()
        return state

    def forward(self, ys, state, is_eval=False):
        if state is None:
            state = self.zero_state(ys.size(0))
        ys_in, ys_out = ys[:, :-1], ys[:, 1:]
        out, (hxs, cxs) = self.rnn(self.embed(ys_in), (state['hxs'], state['cxs']))
        logits = self.output(out)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), ys_out.reshape(-1))
        new_state = {'hxs': hxs, 'cxs': cxs}
        observation = {'loss.lm': loss.item(), 'ppl.lm': torch.exp(loss).item()}
        return loss, new_state, observation


class Reporter(object):
    def __init__(self, tf_writer):
        self.tf_writer = tf_writer
        self.obs_train_local = {}
        self.steps = 0

    def add(self, observation):
        for k, v in observation.items():
            self.obs_train_local.setdefault(k, []).append(v)

    def add_tensorboard_scalar(self, key, value):
        self.tf_writer.add_scalar(key, value, self.steps)

    def step(self):
        self.steps += 1
        self.obs_train_local = {}


class CustomDataParallel(nn.DataParallel):
    pass


def train(args, train_set, model, optimizer, reporter, logger):
    model = CustomDataParallel(model, device_ids=list(range(args.n_gpus)))
    model.cuda()
    hidden = None
    accum_n_steps = 0
    n_steps = 0
    while True:
        ys_train, is_new_epoch = train_set.next()
        ys_train = torch.as_tensor(ys_train).cuda()
        accum_n_steps += 1

        loss, hidden, observation = model(ys_train, hidden)
        reporter.add(observation)
        loss.backward()
        loss.detach()  # Truncate the graph
        if args.accum_grad_n_steps == 1 or accum_n_steps >= args.accum_grad_n_steps:
            if args.clip_grad_norm > 0:
                total_norm = torch.nn.utils.clip_grad_norm_(model.module.parameters(), args.clip_grad_norm)
                reporter.add_tensorboard_scalar('total_norm', total_norm)
            optimizer.step()
            optimizer.zero_grad()
            accum_n_steps = 0
        loss_train = loss.item()
        del loss
        hidden = model.module.repackage_state(hidden)
        reporter.step()
        n_steps += 1
        if n_steps % args.print_step == 0:
            logger.info('step:%d loss:%.3f' % (n_steps, loss_train))
        if is_new_epoch and train_set.epoch == args.n_epochs:
            break
    return model
