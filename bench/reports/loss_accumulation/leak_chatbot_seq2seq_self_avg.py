# Source: https://github.com/coolcheng222/chatbot1/blob/e0f57cb6121f2d753cfcac3ea911ce051ae6a624/Seq2seqModel.py
# Report: audit of a course seq2seq chatbot: Seq2seq.forward sums the masked per-step losses for backward, collects print_losses and stores their average on self.avg, which SeqTrainer.train returns to the iteration loop; the repo appends mask_loss.item() * nTotal, this variant appends the live product
# Shape: forward keeps attached per-step losses in print_losses and their mean on self.avg; SeqTrainer.train hands self.model.avg back and train_iters adds it into print_loss across print_every iterations
# Expect: TML001 line 44; TML019 line 46; TML001 line 77
import random

import torch
import torch.nn as nn

SOS_token = 1


def mask_nll_loss(decoder_output, target, mask, device):
    n_total = mask.sum()
    cross_entropy = -torch.log(torch.gather(decoder_output, 1, target.view(-1, 1)).squeeze(1))
    loss = cross_entropy.masked_select(mask).mean()
    return loss.to(device), n_total.item()


class Seq2seq(nn.Module):
    def __init__(self, encoder, decoder, device, losser=mask_nll_loss):
        super().__init__()
        self.encoder, self.decoder = encoder, decoder
        self.device, self.losser = device, losser
        self.avg = 0.0

    def forward(self, input_variable, lengths, target_variable, mask, max_target_len, teacher_forcing_ratio=1.0):
        print_losses = []
        loss = 0
        n_totals = 0
        batch_size = input_variable.shape[1]
        encoder_outputs, encoder_hidden = self.encoder(input_variable, lengths)
        decoder_input = torch.full((1, batch_size), SOS_token, dtype=torch.long, device=self.device)
        decoder_hidden = encoder_hidden[:self.decoder.n_layers]
        use_teacher_forcing = random.random() < teacher_forcing_ratio
        for t in range(max_target_len):
            decoder_output, decoder_hidden = self.decoder(decoder_input, decoder_hidden, encoder_outputs)
            if use_teacher_forcing:
                decoder_input = target_variable[t].view(1, -1)
            else:
                decoder_input = decoder_output.argmax(dim=1).view(1, -1)
            mask_loss, n_total = self.losser(decoder_output, target_variable[t], mask[t], self.device)
            loss += mask_loss
            print_losses.append(mask_loss * n_total)  # expect: TML001
            n_totals += n_total
        self.avg = sum(print_losses) / n_totals  # expect: TML019
        return loss

    def clip(self, max_norm):
        nn.utils.clip_grad_norm_(self.encoder.parameters(), max_norm)
        nn.utils.clip_grad_norm_(self.decoder.parameters(), max_norm)


class SeqTrainer:
    def __init__(self, model, encoder_optimizer, decoder_optimizer, device):
        self.model = model
        self.device = device
        self.encoder_optimizer = encoder_optimizer
        self.decoder_optimizer = decoder_optimizer

    def train(self, input_variable, lengths, target_variable, mask, max_target_len, clip=50.0):
        self.encoder_optimizer.zero_grad()
        self.decoder_optimizer.zero_grad()
        loss = self.model(input_variable.to(self.device), lengths.to("cpu"), target_variable.to(self.device),
                          mask.to(self.device), max_target_len)
        loss.backward()
        self.model.clip(clip)
        self.encoder_optimizer.step()
        self.decoder_optimizer.step()
        return self.model.avg


def train_iters(trainer, batches, n_iteration, print_every=100):
    print_loss = 0
    for iteration in range(1, n_iteration + 1):
        input_variable, lengths, target_variable, mask, max_target_len = batches[(iteration - 1) % len(batches)]
        print_loss += trainer.train(input_variable, lengths, target_variable, mask, max_target_len)  # expect: TML001
        if iteration % print_every == 0:
            print(f"Iteration {iteration}; average loss {float(print_loss) / print_every:.4f}")
            print_loss = 0
