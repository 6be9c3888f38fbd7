# Source: https://github.com/spro/practical-pytorch/pull/29
# Report: a PR claimed that `loss += criterion(...)` in the seq2seq tutorial keeps creating Variables and causes out-of-memory errors; the maintainer rejected it because an RNN needs the whole graph of the sequence for backpropagation through time.
# Shape: the loss is summed over the decoder steps of one sentence pair, backpropagated once inside train(), and only the float loss.item() / length is returned and accumulated by the outer loop, so each pair's graph dies with the call.
# Expect: near-miss: must be silent
import random

import torch

SOS_token = 0
teacher_forcing_ratio = 0.5


def train(input_variable, target_variable, encoder, decoder, encoder_optimizer,
          decoder_optimizer, criterion, device="cuda"):
    encoder_optimizer.zero_grad()
    decoder_optimizer.zero_grad()
    loss = 0
    target_length = target_variable.size(0)

    encoder_hidden = encoder.init_hidden(device)
    encoder_outputs, encoder_hidden = encoder(input_variable, encoder_hidden)

    decoder_input = torch.tensor([[SOS_token]], device=device)
    decoder_context = torch.zeros(1, decoder.hidden_size, device=device)
    decoder_hidden = encoder_hidden
    use_teacher_forcing = random.random() < teacher_forcing_ratio

    for di in range(target_length):
        decoder_output, decoder_context, decoder_hidden, _ = decoder(
            decoder_input, decoder_context, decoder_hidden, encoder_outputs)
        loss += criterion(decoder_output, target_variable[di])
        if use_teacher_forcing:
            decoder_input = target_variable[di]
        else:
            decoder_input = decoder_output.argmax(dim=1, keepdim=True).detach()

    loss.backward()
    torch.nn.utils.clip_grad_norm_(encoder.parameters(), 5.0)
    torch.nn.utils.clip_grad_norm_(decoder.parameters(), 5.0)
    encoder_optimizer.step()
    decoder_optimizer.step()
    return loss.item() / target_length


def train_iters(pairs, encoder, decoder, enc_opt, dec_opt, criterion, n_iters, print_every=1000):
    print_loss_total = 0.0
    for it in range(1, n_iters + 1):
        input_variable, target_variable = random.choice(pairs)
        loss = train(input_variable, target_variable, encoder, decoder,
                     enc_opt, dec_opt, criterion)
        print_loss_total += loss
        if it % print_every == 0:
            print(f"iter {it} avg loss {print_loss_total / print_every:.4f}")
            print_loss_total = 0.0
