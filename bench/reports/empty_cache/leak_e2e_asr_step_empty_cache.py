# Source: https://github.com/xunweiyee/End-to-end-ASR-Pytorch/blob/14a5bfd37f502e059a2038da774eba24b57fe156/bin/train_asr.py
# Report: course-project fork of an end-to-end CTC/attention ASR solver; the training loop ends every step with torch.cuda.empty_cache() (comment links pytorch issue 13246)
# Shape: empty_cache() runs once per training step inside the while/for loop: it frees no live tensor, syncs, and hands cached blocks back so the next forward pays cudaMalloc again
# Expect: TML009 line 71
import torch


class Solver:
    def __init__(self, model, optimizer, tr_set, dv_set, tokenizer, cal_er, device, max_step, valid_step=5000):
        self.model = model
        self.optimizer = optimizer
        self.tr_set, self.dv_set = tr_set, dv_set
        self.tokenizer = tokenizer
        self.cal_er = cal_er
        self.device = device
        self.max_step = max_step
        self.valid_step = valid_step
        self.step = 0
        self.seq_loss = torch.nn.CrossEntropyLoss(ignore_index=0)
        self.ctc_loss = torch.nn.CTCLoss(blank=0, zero_infinity=False)
        self.eval_stats = {"ctc_loss": 1000.0, "ctc_wer": 3.0}

    def fetch_data(self, data):
        _, feat, feat_len, txt = data
        feat, feat_len, txt = feat.to(self.device), feat_len.to(self.device), txt.to(self.device)
        txt_len = torch.sum(txt != 0, dim=-1)
        return feat, feat_len, txt, txt_len

    def backward(self, loss):
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), 5.0)
        self.optimizer.step()
        return grad_norm

    def exec(self):
        n_epochs = 0
        while self.step < self.max_step:
            running_ctc, running_ctc_count = 0.0, 0
            for data in self.tr_set:
                self.optimizer.zero_grad()
                tf_rate = max(0.0, 1.0 - self.step / self.max_step)
                total_loss = 0

                feat, feat_len, txt, txt_len = self.fetch_data(data)
                ctc_output, encode_len, att_output, att_align, dec_state = \
                    self.model(feat, feat_len, max(txt_len), tf_rate=tf_rate, teacher=txt)

                if ctc_output is not None:
                    ctc_loss = self.ctc_loss(ctc_output.transpose(0, 1), txt, encode_len, txt_len)
                    total_loss += ctc_loss * self.model.ctc_weight
                    running_ctc += ctc_loss.item()
                    running_ctc_count += 1

                if att_output is not None:
                    b, t, _ = att_output.shape
                    att_loss = self.seq_loss(att_output.view(b * t, -1), txt.view(-1))
                    total_loss += att_loss * (1 - self.model.ctc_weight)

                grad_norm = self.backward(total_loss)
                self.step += 1

                if self.step % 500 == 0:
                    print("Tr stat | Loss - {:.2f} | CTC - {:.2f} | Grad. Norm - {:.2f}".format(
                        total_loss.item(), running_ctc / max(running_ctc_count, 1), grad_norm))

                if self.step % self.valid_step == 0:
                    self.validate()

                # End of step
                # https://github.com/pytorch/pytorch/issues/13246#issuecomment-529185354
                torch.cuda.empty_cache()  # expect: TML009
                if self.step > self.max_step:
                    break
            n_epochs += 1

    def validate(self):
        self.model.eval()
        dev_wer = []
        total_ctc_loss = 0
        for i, data in enumerate(self.dv_set):
            feat, feat_len, txt, txt_len = self.fetch_data(data)
            with torch.no_grad():
                ctc_output, encode_len, att_output, att_align, dec_state = \
                    self.model(feat, feat_len, int(max(txt_len) * 1.2))
            ctc_loss = self.ctc_loss(ctc_output.transpose(0, 1), txt, encode_len, txt_len)
            total_ctc_loss += ctc_loss
            dev_wer.append(self.cal_er(self.tokenizer, ctc_output, txt, ctc=True))
        self.eval_stats["ctc_loss"] = total_ctc_loss.item() / len(self.dv_set)
        self.eval_stats["ctc_wer"] = sum(dev_wer) / len(dev_wer)
        self.model.train()
