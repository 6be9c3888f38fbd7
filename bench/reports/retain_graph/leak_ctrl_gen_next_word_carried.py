# Source: https://github.com/GBLin5566/toward-controlled-generation-of-text-pytorch/issues/9
# Report: after setting retain_graph=True as suggested, memory "just blows up" while training even on GPU; the reporter notes only the backward before the last one should retain the graph.
# Shape: the soft one-hot `next_word` produced by the decoder survives the batch loop and seeds the next batch's decoding, and both backward calls retain the graph, so every batch's graph stays chained to all earlier ones.
# Expect: TML006 lines 54, 55
import torch
import torch.nn.functional as F

criterion = torch.nn.CrossEntropyLoss()
LAMBDA_C, LAMBDA_Z, MAXLEN, C_DIM = 0.1, 0.1, 20, 2


def latent_loss(z_mean, z_stddev):
    mean_sq, stddev_sq = z_mean * z_mean, z_stddev * z_stddev
    return 0.5 * torch.mean(mean_sq + stddev_sq - torch.log(stddev_sq) - 1)


def bos_one_hot(batch_size, vocab, bos_id, device):
    word = torch.zeros(batch_size, vocab, device=device)
    word[:, bos_id] = 1.0
    return word


def train_vae_with_attr_loss(encoder, decoder, discriminator, batches, e_opt, g_opt,
                             vocab, bos_id, device="cuda"):
    next_word = None
    for batch_idx, (input_data, labels) in enumerate(batches):
        input_data, labels = input_data.to(device), labels.to(device)
        encoder.zero_grad()
        decoder.zero_grad()
        enc_hidden = encoder(input_data, encoder.init_hidden(len(input_data)))
        code = F.one_hot(labels, C_DIM).float()
        hidden = decoder.init_hidden_with_code(enc_hidden, code)

        vae_loss = 0
        generated = [bos_one_hot(len(input_data), vocab, bos_id, device)]
        for t in range(MAXLEN - 1):
            word = next_word if next_word is not None else generated[0]
            output, hidden, pre_soft = decoder(word, hidden, low_temp=True,
                                               one_hot_input=True)
            next_word = output
            vae_loss += criterion(pre_soft, input_data[:, t + 1])
            generated.append(output)
        ll = latent_loss(encoder.z_mean, encoder.z_sigma)

        sentence = torch.stack(generated, dim=1)
        discriminator.eval()
        l_attr_c = criterion(discriminator(sentence, dont_pass_emb=True), labels)
        encoder(decoder.one_hot_to_word_emb(sentence),
                encoder.init_hidden(len(sentence)), dont_pass_emb=True)
        l_attr_z = latent_loss(encoder.z_mean, encoder.z_sigma)

        total_vae_loss = vae_loss + ll
        extra_decoder_loss = LAMBDA_C * l_attr_c + LAMBDA_Z * l_attr_z
        total_vae_loss.backward(retain_graph=True)  # expect: TML006
        extra_decoder_loss.backward(retain_graph=True)  # expect: TML006
        e_opt.step()
        g_opt.step()
        if batch_idx % 25 == 0:
            print(f"[Attr] batch {batch_idx} language loss {vae_loss.item() / MAXLEN:.4f}")
