# Source: https://github.com/sgrvinod/a-PyTorch-Tutorial-to-Image-Captioning/issues/43
# Report: test code modelled on the tutorial's eval.py: GPU memory rose step by step inside the decoding loop at `h, c = decoder.decode_step(...)` and went OOM at batch size 32/64; the evaluation code runs with grad enabled
# Shape: same batched evaluation helper with the whole batch loop under torch.no_grad(): (h, c) is still carried between decode steps but holds no graph
# Expect: near-miss: must be silent
import torch
from nltk.translate.bleu_score import corpus_bleu

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def evaluate(encoder, decoder, loader, word_map, max_len=50):
    encoder.eval()
    decoder.eval()
    references, hypotheses = [], []
    special = {word_map["<start>"], word_map["<end>"], word_map["<pad>"]}

    with torch.no_grad():
        for images, caps, caplens, allcaps in loader:
            images = images.to(device)
            encoder_out = encoder(images)
            batch_size, encoder_dim = encoder_out.size(0), encoder_out.size(-1)
            encoder_out = encoder_out.view(batch_size, -1, encoder_dim)

            h, c = decoder.init_hidden_state(encoder_out)
            prev_words = torch.full((batch_size,), word_map["<start>"], dtype=torch.long, device=device)
            seqs = torch.zeros(batch_size, max_len, dtype=torch.long, device=device)
            for step in range(max_len):
                embeddings = decoder.embedding(prev_words)
                awe, _ = decoder.attention(encoder_out, h)
                gate = decoder.sigmoid(decoder.f_beta(h))
                h, c = decoder.decode_step(torch.cat([embeddings, gate * awe], dim=1), (h, c))
                scores = decoder.fc(h)
                prev_words = scores.argmax(dim=1)
                seqs[:, step] = prev_words

            for seq, img_caps in zip(seqs.tolist(), allcaps.tolist()):
                hypotheses.append([w for w in seq if w not in special])
                references.append([[w for w in cap if w not in special] for cap in img_caps])

    return corpus_bleu(references, hypotheses)
